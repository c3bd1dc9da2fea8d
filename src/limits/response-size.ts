/**
 * The answer's size cap, applied to the text already serialised (no second serialisation);
 * over it the caller gets one coded error instead of the data.
 */
import { GraphQLError } from 'graphql';
import { ErrorCode } from '../errors.js';

/** Characters bound bytes from below (a UTF-8 character is 1 to 4 bytes); count bytes only near the limit. */
function fits(text: string, maxBytes: number): boolean {
  return text.length <= maxBytes / 4 || Buffer.byteLength(text) <= maxBytes;
}

export function tooLarge(maxBytes: number, extensions: Record<string, unknown> = {}): GraphQLError {
  return new GraphQLError(`The answer would be larger than ${maxBytes} bytes: ask for fewer items or fields.`, {
    extensions: { code: ErrorCode.RESPONSE_TOO_LARGE, limit: maxBytes, ...extensions },
  });
}

export function capAnswer(text: string, maxBytes: number, operation: { readonly requestId: string; readonly logger: { warn(fields: object, message: string): void } }): string {
  if (fits(text, maxBytes)) return text;
  operation.logger.warn({ bytes: Buffer.byteLength(text), limit: maxBytes }, 'answer over the response size limit replaced by an error');
  return JSON.stringify({ errors: [tooLarge(maxBytes, { requestId: operation.requestId }).toJSON()] });
}

/** For a transport that serialises itself (graphql-ws): whether this result would pass the cap. */
export function overSize(result: unknown, maxBytes: number): boolean {
  return !fits(JSON.stringify(result), maxBytes);
}
