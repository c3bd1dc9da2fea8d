/**
 * The answer's size cap, applied where Apollo serialises the result (its
 * `stringifyResult` hook), so it costs no second serialisation. Over the cap
 * the caller gets one coded error instead of the data. The cost limit and the
 * bounded log bodies keep what can be built before this point small.
 */
import type { FormattedExecutionResult } from 'graphql';
import { ErrorCode } from '../errors.js';

export function capResponseSize(
  maxBytes: number,
  logger: { warn(fields: object, message: string): void },
  /** More `extensions` for the error (the operation's request id). */
  extensions: () => Record<string, unknown> = () => ({}),
) {
  return (result: FormattedExecutionResult): string => {
    const text = JSON.stringify(result);
    // Characters bound bytes from below; count bytes only near the limit.
    if (text.length <= maxBytes / 4 || Buffer.byteLength(text) <= maxBytes) return text;
    logger.warn({ bytes: Buffer.byteLength(text), limit: maxBytes }, 'answer over the response size limit replaced by an error');
    return JSON.stringify({
      errors: [
        {
          message: `The answer would be larger than ${maxBytes} bytes: ask for fewer items or fields.`,
          extensions: { code: ErrorCode.RESPONSE_TOO_LARGE, limit: maxBytes, ...extensions() },
        },
      ],
    });
  };
}
