/**
 * The error body every failure uses: `{"message": "...", "errors": {"field": ["..."]}}`
 * (docs/upstream.md, Errors). Status codes: 400 unreadable body, 401 bad key, 404 unknown
 * id (also another account's id), 409 invalid state move, 422 field validation.
 */
export type FieldErrorMap = Record<string, string[]>;

export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly errors: FieldErrorMap = {},
  ) {
    super(message);
    this.name = 'ApiError';
  }

  toBody(): { message: string; errors: FieldErrorMap } {
    return { message: this.message, errors: this.errors };
  }
}

export const notFound = (what: string, id: string | number): ApiError =>
  new ApiError(404, `${what} ${id} not found`, { id: [`no ${what.toLowerCase()} with id ${id}`] });

export const invalidMove = (field: string, message: string): ApiError => new ApiError(409, message, { [field]: [message] });

/** Collects every field problem of a request, then throws them all at once as a 422. */
export class FieldErrors {
  readonly errors: FieldErrorMap = {};

  add(field: string, message: string): void {
    (this.errors[field] ??= []).push(message);
  }

  get empty(): boolean {
    return Object.keys(this.errors).length === 0;
  }

  throwIfAny(message = 'The request has invalid fields'): void {
    if (!this.empty) throw new ApiError(422, message, this.errors);
  }
}
