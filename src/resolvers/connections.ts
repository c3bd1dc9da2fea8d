/** Root Relay connections over an upstream list or search, each object read primed into its loader. */
import { UPSTREAM_MAX_PER_PAGE, type Context } from '../context.js';
import { paginate, toWindow, type Connection, type PageRequest } from '../pagination.js';
import type { Id, Page } from '../upstream/index.js';
import { primedList } from './support.js';

interface ConnectionArgs<A> {
  first?: number | null;
  after?: string | null;
  filter?: A | null;
}

export interface ConnectionSpec<T, A, F> {
  /** Throws to refuse the filter. */
  filters?: (filter: A | null | undefined) => F;
  read: (api: Context['api'], page: PageRequest, filters: F) => Promise<Page<T>>;
  /** Written as `(filters) => check(filters)`, so TypeScript takes the object type from `read` first. */
  keep?: (filters: F) => ((item: T) => boolean) | undefined;
  // NoInfer: the object type comes from `read`, the loader only has to accept it.
  loader: (loaders: Context['loaders']) => { prime(id: Id, value: NoInfer<T>): unknown };
}

/** `first` and `after` are checked before the filter, so a caller sees the same error first whatever the field. */
export function connectionField<T extends { id: Id }, A = never, F = object>(spec: ConnectionSpec<T, A, F>) {
  return (_: unknown, args: ConnectionArgs<A>, { api, loaders, pagination }: Context): Promise<Connection<T>> => {
    const window = toWindow({ first: args.first, after: args.after }, pagination);
    const filters = spec.filters ? spec.filters(args.filter) : ({} as F);
    const read = async (page: PageRequest) => {
      const result = await spec.read(api, page, filters);
      primedList(result.items, spec.loader(loaders));
      return result;
    };
    return paginate(window, read, { upstreamMaxPerPage: UPSTREAM_MAX_PER_PAGE, keep: spec.keep?.(filters) });
  };
}
