import { z } from 'zod';

/** Thrown at start-up when the environment does not describe a runnable process. */
export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n${problems.map((problem) => `  - ${problem}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

/**
 * Validates the environment once into a typed, frozen object. Every failing variable is named,
 * so a bad deployment fails fast with a message an operator can act on.
 */
export function loadConfig<Shape extends z.ZodRawShape>(
  shape: Shape,
  env: NodeJS.ProcessEnv = process.env,
): Readonly<z.infer<z.ZodObject<Shape>>> {
  const result = z.object(shape).safeParse(env);
  if (!result.success) {
    throw new ConfigError(result.error.issues.map((issue) => `${issue.path.join('.') || '(root)'}: ${issue.message}`));
  }
  return Object.freeze(result.data);
}
