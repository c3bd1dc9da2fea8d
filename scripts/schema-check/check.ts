/**
 * The schema check as one function of its inputs (no files, no git, no
 * network), so `npm run schema:check` and the planting tests run the same
 * code: changes (step 1), composition (step 2), operations (step 3) and the
 * decision on breaking changes (step 4).
 */
import { decide, type AcceptedChanges, type Decision } from './acceptance.js';
import { parseSdl, schemaChanges, type SchemaChange } from './changes.js';
import { buildSchema } from 'graphql';
import { compose, type CompositionFinding } from './composition.js';
import type { KnownDocument } from './documents.js';
import { checkOperations, type OperationsResult } from './operations.js';
import type { Subgraph } from './stand-ins.js';

export interface CheckInputs {
  /** The released subgraph SDL (the baseline). */
  released: string;
  /** The subgraph SDL to check. */
  current: string;
  accepted: AcceptedChanges;
  /** Documents sent to the gateway: validated against the subgraph schema. */
  documents: readonly KnownDocument[];
  /** Subgraphs of a real supergraph, composed beside the stand-ins. */
  subgraphs?: readonly Subgraph[];
  /** Documents sent to a router: validated against the composed API schema. */
  supergraphDocuments?: readonly KnownDocument[];
}

export interface CheckResult {
  changes: SchemaChange[];
  decision: Decision;
  composition: CompositionFinding[];
  operations: OperationsResult;
  passed: boolean;
}

export async function runCheck(inputs: CheckInputs): Promise<CheckResult> {
  const released = parseSdl(inputs.released);
  const current = parseSdl(inputs.current);
  const changes = await schemaChanges(released, current);
  const decision = decide(changes, inputs.accepted);
  const composed = compose(released, current, inputs.subgraphs);
  const composition = composed.findings;
  const operations = checkOperations(inputs.documents, current.schema, released.schema);
  const routed = inputs.supergraphDocuments ?? [];
  if (routed.length > 0) {
    if (composed.currentApiSdl === undefined || composed.releasedApiSdl === undefined) {
      for (const known of routed) operations.findings.push({ document: known.name, kind: 'not validated', message: 'the supergraph does not compose (above)' });
    } else {
      const api = checkOperations(routed, buildSchema(composed.currentApiSdl), buildSchema(composed.releasedApiSdl));
      operations.findings.push(...api.findings);
      operations.validated += api.validated;
      operations.sdlBlocks.push(...api.sdlBlocks);
    }
  }
  const passed =
    decision.unaccepted.length === 0 &&
    decision.stale.length === 0 &&
    !composition.some((f) => f.kind === 'error' || f.kind === 'baseline error') &&
    operations.findings.length === 0;
  return { changes, decision, composition, operations, passed };
}
