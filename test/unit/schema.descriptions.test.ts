import { isEnumType, isInputObjectType, isIntrospectionType, isObjectType, isSpecifiedScalarType } from 'graphql';
import { describe, expect, it } from 'vitest';
import { buildSchema } from '../../src/schema.js';

/**
 * Apollo Studio and Sandbox show descriptions as the API's documentation, so
 * every type, field, argument, input field and enum value of ours has one.
 */
describe('schema descriptions', () => {
  it('describes every type, field, argument, input field and enum value', () => {
    const schema = buildSchema();
    const missing: string[] = [];
    const need = (what: string, description: string | null | undefined) => {
      if (!description?.trim()) missing.push(what);
    };
    for (const type of Object.values(schema.getTypeMap())) {
      // Built-ins, federation's own types (_Service, _Entity, _Any, ...) are not ours to describe.
      if (isIntrospectionType(type) || isSpecifiedScalarType(type) || type.name.startsWith('_') || type.name.startsWith('link__') || type.name.startsWith('federation__')) continue;
      need(type.name, type.description);
      if (isObjectType(type) || isInputObjectType(type)) {
        for (const field of Object.values(type.getFields())) {
          if (field.name.startsWith('_')) continue;
          need(`${type.name}.${field.name}`, field.description);
          for (const arg of 'args' in field ? field.args : []) need(`${type.name}.${field.name}(${arg.name})`, arg.description);
        }
      }
      if (isEnumType(type)) for (const value of type.getValues()) need(`${type.name}.${value.name}`, value.description);
    }
    expect(missing).toEqual([]);
  });
});
