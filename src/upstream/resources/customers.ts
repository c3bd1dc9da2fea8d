/** Customers: `/v1/customers` and its search by e-mail or free text. */
import type { CustomerCreateParams, CustomerSearchParams, PaymentsApi } from '../api.js';
import { resourceShape } from '../decode.js';
import type { QueryValue } from '../http.js';
import { customerModel } from '../models.js';
import { phoneNumberBody, searchQuery, type Fetch } from './fetch.js';

const customer = resourceShape('customer', 'customers', customerModel);

export function customers({ byId, one, page }: Fetch): PaymentsApi['customers'] {
  return {
    retrieve: (id, opts) => byId(customer, '/v1/customers/:id', id, opts),
    search: (params, opts) =>
      page(customer, { method: 'GET', pattern: '/v1/customers/search', query: customerSearch(params) }, params, opts),
    create: (params, opts) => one(customer, { method: 'POST', pattern: '/v1/customers', body: customerBody(params) }, opts),
  };
}

function customerSearch(params: CustomerSearchParams = {}): Record<string, QueryValue> {
  return searchQuery(params, { email: params.email, q: params.query });
}

function customerBody(params: Partial<CustomerCreateParams>) {
  return { firstname: params.firstname, lastname: params.lastname, email: params.email, phone_number: phoneNumberBody(params.phoneNumber) };
}
