/**
 * An answer without its `extensions.cost`: two answers with the same result
 * differ there by the upstream calls each request made (a replayed mutation
 * or a cached read makes none), so tests of "the same answer" compare the rest.
 */
export function withoutCost<T extends object>(answer: T): T {
  const { extensions, ...rest } = answer as T & { extensions?: Record<string, unknown> };
  if (!extensions || !('cost' in extensions)) return answer;
  const { cost: _cost, ...others } = extensions;
  return (Object.keys(others).length > 0 ? { ...rest, extensions: others } : rest) as T;
}
