/**
 * Money on the GraphQL side: the `Decimal` scalar, the `...Money` fields and
 * their deprecated `Float` twins, amounts from inputs. No step makes a JS number.
 */
import { GraphQLError, GraphQLScalarType, Kind } from 'graphql';
import { UserErrorCode, UserInputError, type UserError } from '../errors.js';
import type { Loaders } from '../loaders/index.js';
import { amountProblem, InputRule } from '../payments/rules.js';
import { asDecimal, Decimal } from '../upstream/index.js';
import { snakeToCamel, type CamelCase } from '../naming.js';

const DECIMAL_INPUT_HELP = 'A Decimal is a string such as "2500" or "12.50" (digits, an optional "-" and fraction).';

export const DecimalScalar = new GraphQLScalarType<Decimal, string>({
  name: 'Decimal',
  description: 'An exact decimal number, serialised as a string.',
  serialize(value) {
    if (value instanceof Decimal) return value.toString();
    if (typeof value === 'string') return asDecimal(value).toString();
    throw new GraphQLError('Decimal cannot represent a non-decimal value.');
  },
  parseValue(value) {
    const parsed = typeof value === 'string' ? Decimal.parse(value) : null;
    if (!parsed) throw new GraphQLError(`Invalid Decimal. ${DECIMAL_INPUT_HELP}`);
    return parsed;
  },
  parseLiteral(ast) {
    const parsed = ast.kind === Kind.STRING ? Decimal.parse(ast.value) : null;
    if (!parsed) throw new GraphQLError(`Invalid Decimal literal. ${DECIMAL_INPUT_HELP}`);
    return parsed;
  },
});

export interface MoneyValue {
  amount: Decimal;
  currencyIso: string;
}

type Amount = Decimal | string | null | undefined;

async function money(amount: Amount, currencyId: number | null | undefined, loaders: Loaders): Promise<MoneyValue | null> {
  if (amount === null || amount === undefined || currencyId === null || currencyId === undefined) return null;
  const currency = await loaders.currencyById.load(currencyId);
  return currency ? { amount: asDecimal(amount), currencyIso: currency.iso } : null;
}

/** The decimal's string: graphql-js's Float serialiser turns it into the number. */
function floatTwin(amount: Amount): string | null {
  return amount === null || amount === undefined ? null : asDecimal(amount).toString();
}

type WithCurrency = { currency_id?: number | null };
interface MoneyContext {
  loaders: Loaders;
}

export function moneyFields<Model extends WithCurrency>() {
  return <K extends keyof Model & string>(...keys: K[]) => {
    const out: Record<string, unknown> = {};
    for (const key of keys) {
      const camel = snakeToCamel(key);
      out[camel] = (parent: Model) => floatTwin(parent[key] as Amount);
      out[`${camel}Money`] = (parent: Model, _args: unknown, { loaders }: MoneyContext) =>
        money(parent[key] as Amount, parent.currency_id, loaders);
    }
    return out as { [P in K as CamelCase<P>]: (parent: Model) => null extends Model[P] ? string | null : string } & {
      [P in K as `${CamelCase<P>}Money`]: (parent: Model, args: unknown, context: MoneyContext) => Promise<MoneyValue | null>;
    };
  };
}

interface AmountInput {
  amount?: number | null;
  amountDecimal?: Decimal | null;
}

export async function amountFromInput(
  input: AmountInput,
  currencyIso: () => Promise<string | null> | string | null,
  path: string[],
  required: boolean,
): Promise<Decimal | undefined> {
  const fail = (field: string, message: string, code: UserErrorCode = UserErrorCode.Invalid): never => {
    const error: UserError = { field: [...path, field], message, code };
    throw new UserInputError([error]);
  };
  const { amount, amountDecimal } = input;
  if (amountDecimal !== null && amountDecimal !== undefined) {
    if (amount !== null && amount !== undefined) fail('amountDecimal', 'Give `amountDecimal` or the deprecated `amount`, not both.');
    const iso = await currencyIso();
    // An unknown currency is the upstream's to refuse; the sign is still checked here.
    const problem = amountProblem(amountDecimal, iso);
    if (problem) fail('amountDecimal', problem);
    return amountDecimal;
  }
  if (amount !== null && amount !== undefined) {
    if (!InputRule.amount.test(amount)) fail('amount', InputRule.amount.message);
    // A JSON number's shortest text is all it holds; it meets the same currency rule as `amountDecimal`.
    const decimal = Decimal.fromParsedNumber(amount);
    const problem = amountProblem(decimal, await currencyIso());
    if (problem) fail('amount', problem);
    return decimal;
  }
  if (required) fail('amountDecimal', 'Give the amount as `amountDecimal`.', UserErrorCode.Required);
  return undefined;
}
