/**
 * The ready-made codegen scalars map (supergraph/client-scalars.ts) names every
 * custom scalar a client of payments.graphql meets, and only those: a scalar
 * added to the SDL without a type there would reach client teams as `unknown`.
 */
import { readFileSync } from 'node:fs';
import { buildASTSchema, isScalarType, parse, specifiedScalarTypes } from 'graphql';
import { describe, expect, it } from 'vitest';
import { PAYMENTS_CLIENT_SCALARS } from '../../../supergraph/client-scalars.js';

const SDL = readFileSync(new URL('../../../supergraph/payments.graphql', import.meta.url), 'utf8');

/** Scalars only a router reads (the federation spec's own): clients never meet them. */
const FEDERATION_ONLY = /^(_Any|link__|federation__)/;

describe('the codegen scalars map for client teams', () => {
  it('types every custom scalar of the published SDL, and ID, as a client sees it', () => {
    const schema = buildASTSchema(parse(SDL), { assumeValidSDL: true });
    const builtIn = new Set(specifiedScalarTypes.map((t) => t.name));
    const custom = Object.values(schema.getTypeMap())
      .filter((t) => isScalarType(t) && !builtIn.has(t.name) && !FEDERATION_ONLY.test(t.name))
      .map((t) => t.name);
    expect(custom.length).toBeGreaterThan(0);
    expect(Object.keys(PAYMENTS_CLIENT_SCALARS).sort()).toEqual([...custom, 'ID'].sort());
  });

  it('is what the checkout example generates its types with', () => {
    const codegen = readFileSync(new URL('../../../examples/checkout/codegen.ts', import.meta.url), 'utf8');
    expect(codegen).toContain('scalars: PAYMENTS_CLIENT_SCALARS');
    const generated = readFileSync(new URL('../../../examples/checkout/src/gql/graphql.ts', import.meta.url), 'utf8');
    // amountMoney.amount is a Decimal: a string in the generated types, not `unknown`.
    expect(generated).toMatch(/amountMoney: \{ amount: string, currencyIso: string \}/);
    expect(generated).not.toMatch(/\w\??: unknown\b/);
  });
});
