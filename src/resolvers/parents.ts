/**
 * Parent types the resolvers receive where a REST model is not the whole
 * story. A to-one relation whose selection reads only `id` is answered from
 * the foreign key, with no upstream read (support.ts, `relation`): that
 * parent has its id and nothing else, and its type says so, so a resolver
 * reading another field must handle it being absent.
 */
import type { CurrencyModel, CustomerModel } from '../upstream/index.js';

/** The declared keys of a model, without zod's catch-all index signature. */
type Known<T> = { [K in keyof T as string extends K ? never : K]: T[K] };

/** A model's id, every other field absent. */
export type IdOnly<M extends { id: unknown }> = Pick<M, 'id'> & { [K in Exclude<keyof Known<M>, 'id'>]?: undefined };

export type CurrencyParent = CurrencyModel | IdOnly<CurrencyModel>;
export type CustomerParent = CustomerModel | IdOnly<CustomerModel>;
