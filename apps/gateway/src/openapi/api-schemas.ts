import type { SchemaObject } from '@nestjs/swagger';
import { z } from 'zod';

/** Every named schema of the document: `components.schemas`, generated from these zod schemas. */
export const apiSchemas = z.registry<{ id: string; description?: string }>();

export const schemaRef = (id: string) => ({ $ref: `#/components/schemas/${id}` });

/**
 * A zod schema as a document schema: a `$ref` when it is (or is given) a name in `apiSchemas`, inline
 * otherwise. Requests are documented as the client sends them (zod's input side).
 */
export function documented(schema: z.ZodType, name?: string): SchemaObject {
  const known = apiSchemas.get(schema)?.id;
  if (known) return schemaRef(known) as SchemaObject;
  if (name) {
    apiSchemas.add(schema, { id: name });
    return schemaRef(name) as SchemaObject;
  }
  return withoutDialect(z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }));
}

/** `components.schemas`: every registered schema, refs between them as `#/components/schemas/<id>`. */
export function componentSchemas(): Record<string, SchemaObject> {
  const { schemas } = z.toJSONSchema(apiSchemas, {
    io: 'input',
    unrepresentable: 'any',
    uri: (id) => `#/components/schemas/${id}`,
  });
  return Object.fromEntries(
    Object.entries(schemas)
      .sort(([a], [b]) => a.localeCompare(b)) // by name, whichever feature registered its schemas first
      .map(([id, schema]) => [id, withoutDialect(schema) as SchemaObject]),
  );
}

/** The document's dialect is JSON Schema 2020-12 already (OpenAPI 3.1); embedded schemas drop `$schema`/`$id`. */
function withoutDialect(schema: object): object {
  const { $schema: _dialect, $id: _id, ...rest } = schema as Record<string, unknown>;
  return rest;
}
