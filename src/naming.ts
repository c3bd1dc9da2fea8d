/** REST field names are snake_case, GraphQL's camelCase: `amount_transferred` -> `amountTransferred`. */
export function snakeToCamel(name: string): string {
  return name.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase());
}
