/**
 * Look-ahead for the to-one relations of a connection's nodes
 * (`payouts { nodes { customer currency } }`). Without it graphql-js completes
 * every node through promises: one per relation, then one per node and one for
 * the list, though the loaders batch the reads all the same. A connection whose
 * nodes select a relation (beyond its `id`) reads it through the same loader
 * once the nodes are known, and the relation's resolver (support.ts) then
 * answers from what settled, at once. The same ids are read, in the same
 * batches, and a failed read is the same error at the same path: only the
 * promises go: about 4 % of a warm 50-item page's CPU (bench/README.md).
 */
import type { GraphQLResolveInfo, SelectionSetNode } from 'graphql';
import type { Loaders } from '../loaders/index.js';
import { selectedFieldNames, selectedFields } from '../graphql/selection.js';

/** The loader method the look-ahead needs: DataLoader's `loadMany`, which settles each key to its value or its Error. */
interface ManyLoader {
  loadMany(ids: readonly number[]): PromiseLike<ArrayLike<unknown>>;
}

/** A to-one relation of a connection's nodes: the field, the node's foreign key, and the loader it reads through. */
export interface ListRelation<T> {
  field: string;
  key: (node: T) => number | null | undefined;
  loader: (loaders: Loaders) => ManyLoader;
}

/** What each loader's look-ahead read settled to, by id. Loaders are per operation, so this is too. */
const settledBy = new WeakMap<object, Map<number, unknown>>();

/** What the look-ahead read for `id` through `loader`, when it did: the value, or the Error the read settled to. */
export function lookedAhead(loader: object, id: number): { value: unknown } | undefined {
  const values = settledBy.get(loader);
  return values?.has(id) ? { value: values.get(id) } : undefined;
}

/** Reads the relations the query selects on these nodes, and keeps what each read settled to. */
export async function loadAhead<T>(nodes: readonly (T | null)[], relations: readonly ListRelation<T>[], loaders: Loaders, info: GraphQLResolveInfo): Promise<void> {
  const selections = nodeSelections(info);
  await Promise.all(
    relations
      .filter((relation) => selectsBeyondId(selections, relation.field, info))
      .map(async (relation) => {
        // Every node's id, repeats included: the loader counts a repeat as a cache hit, as it did when each node loaded its own.
        const ids = nodes.flatMap((node) => (node === null ? [] : [relation.key(node)])).filter((id): id is number => typeof id === 'number');
        if (ids.length === 0) return;
        const loader = relation.loader(loaders);
        const values = await loader.loadMany(ids);
        let settled = settledBy.get(loader);
        if (!settled) settledBy.set(loader, (settled = new Map()));
        ids.forEach((id, i) => settled.set(id, values[i]));
      }),
  );
}

/** The selection sets the connection's nodes are executed with: under `nodes`, and under `edges { node }`. */
function nodeSelections(info: GraphQLResolveInfo): SelectionSetNode[] {
  const sets: SelectionSetNode[] = [];
  const under = (set: SelectionSetNode | undefined) => selectedFields(set, info.fragments, info.variableValues);
  for (const connection of info.fieldNodes) {
    for (const field of under(connection.selectionSet)) {
      if (field.name.value === 'nodes' && field.selectionSet) sets.push(field.selectionSet);
      if (field.name.value === 'edges') {
        for (const inner of under(field.selectionSet)) if (inner.name.value === 'node' && inner.selectionSet) sets.push(inner.selectionSet);
      }
    }
  }
  return sets;
}

/** Whether some selection of `field` asks for more than its `id`: a relation of which only the id is selected is read from the foreign key alone. */
function selectsBeyondId(sets: readonly SelectionSetNode[], field: string, info: GraphQLResolveInfo): boolean {
  return sets.some((set) =>
    selectedFields(set, info.fragments, info.variableValues).some(
      (node) => node.name.value === field && selectedFieldNames(node.selectionSet, info.fragments, info.variableValues).some((name) => name !== 'id' && name !== '__typename'),
    ),
  );
}
