/**
 * The answer's size cap, applied where Apollo serialises the result (its
 * `stringifyResult` hook), so it costs no second serialisation. Over the cap
 * the caller gets one coded error instead of the data. The cost limit and the
 * bounded log bodies keep what can be built before this point small.
 */
import { GraphQLError, type FormattedExecutionResult } from 'graphql';
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

export function capResponseSize(
  maxBytes: number,
  logger: { warn(fields: object, message: string): void },
  /** More `extensions` for the error (the operation's request id). */
  extensions: () => Record<string, unknown> = () => ({}),
) {
  return (result: FormattedExecutionResult): string => {
    const text = JSON.stringify(result);
    if (fits(text, maxBytes)) return text;
    logger.warn({ bytes: Buffer.byteLength(text), limit: maxBytes }, 'answer over the response size limit replaced by an error');
    return JSON.stringify({ errors: [tooLarge(maxBytes, extensions()).toJSON()] });
  };
}

/** For a transport that serialises itself (graphql-ws): whether this result would pass the cap. */
export function overSize(result: unknown, maxBytes: number): boolean {
  return !fits(JSON.stringify(result), maxBytes);
}
