/** An Apollo plugin: the HTTP status of an answer that says the payments API refused the caller's key. */
import type { ApolloServerPlugin } from '@apollo/server';
import { ErrorCode } from '../errors.js';
import type { HttpContext } from './graphql-route.js';

/**
 * A key the payments API refuses answers HTTP 401 every time: the door answers 401 once the refusal is
 * known, so the answer that learns it (an UNAUTHENTICATED error from the upstream's 401) says the same.
 */
export const refusedKeyStatus: ApolloServerPlugin<HttpContext> = {
  async requestDidStart() {
    return {
      async willSendResponse({ response }) {
        if (response.body.kind !== 'single') return;
        const errors = response.body.singleResult.errors;
        if (errors?.some((e) => e.extensions?.code === ErrorCode.UNAUTHENTICATED)) response.http.status = 401;
      },
    };
  },
};
