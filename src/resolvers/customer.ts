import type { Resolvers } from '../__generated__/resolvers-types.js';
import type { CustomerModel } from '../upstream/index.js';
import { idempotent } from '../idempotency/index.js';
import { badUserInput } from '../errors.js';
import { customerCheck } from '../payments/filters.js';
import { InputRule } from '../payments/rules.js';
import { connectionField } from './connections.js';
import { createdRange, phoneChecks, phoneNumber } from './inputs.js';
import { checkInput, payload, renamed, toUpstreamId } from './support.js';

export const customerResolvers = {
  Query: {
    customer: (_, { id }, { loaders }) => loaders.customer.load(toUpstreamId(id)),
    // Always the search endpoint (docs/graphql-contract.md, Connections): it filters and pages alike.
    customers: connectionField({
      filters: (filter) => {
        // A query has no userErrors: a malformed address is refused as the argument it is.
        if (filter?.email && !InputRule.email.test(filter.email)) throw badUserInput(InputRule.email.message, 'filter.email');
        return { email: filter?.email ?? undefined, query: filter?.query ?? undefined, ...createdRange(filter?.createdAt) };
      },
      read: (api, page, filters) => api.customers.search({ ...page, ...filters }),
      keep: (filters) => customerCheck(filters),
      loader: (loaders) => loaders.customer,
    }),
  },

  Mutation: {
    createCustomer: idempotent((_, { input }, { api, loaders }, call) =>
      payload('customer', { root: 'input', idField: null }, async () => {
        checkInput([
          [InputRule.email.test(input.email), ['input', 'email'], InputRule.email.message],
          ...phoneChecks(input.phoneNumber, ['input', 'phoneNumber']),
        ]);
        const created = await api.customers.create(
          {
            firstname: input.firstname,
            lastname: input.lastname,
            email: input.email,
            phoneNumber: phoneNumber(input.phoneNumber),
          },
          await call.options(),
        );
        loaders.customer.prime(created.id, created);
        return created;
      }),
    ),
  },

  Customer: {
    __resolveReference: (ref, { loaders }) => loaders.customer.load(toUpstreamId(ref.id)),
    id: (c) => c.id,
    fullName: (c) => c.full_name ?? ([c.firstname, c.lastname].filter(Boolean).join(' ') || null),
    // The phone number has no endpoint of its own: it is there when the upstream embeds it.
    phoneNumber: (c) => c.phone_number ?? null,
    ...renamed<CustomerModel>()('account_id', 'phone_number_id', 'created_at', 'updated_at', 'deleted_at'),
  },

  PaymentsPhoneNumber: {
    // The upstream writes the country in either case; CountryCode is upper case.
    country: (p) => p.country?.toUpperCase() ?? null,
  },
} satisfies Resolvers;
