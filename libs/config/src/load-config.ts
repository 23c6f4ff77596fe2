import { z } from 'zod';

import { isPerDeployment } from './common-env';

/** Thrown at start-up when the environment does not describe a runnable process. */
export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n${problems.map((problem) => `  - ${problem}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

/**
 * Validates the environment once into a typed, frozen object. Every failing variable is named,
 * so a bad deployment fails fast with a message an operator can act on. With `NODE_ENV=production`
 * every per-deployment variable (perDeployment: addresses, URLs, credentials whose defaults serve a
 * developer machine) must be set: the error then names all that are missing at once.
 */
export function loadConfig<Shape extends z.ZodRawShape>(
  shape: Shape,
  env: NodeJS.ProcessEnv = process.env,
): Readonly<z.infer<z.ZodObject<Shape>>> {
  const unset =
    env.NODE_ENV === 'production'
      ? Object.keys(shape).filter((key) => isPerDeployment(shape[key] as z.ZodType) && !env[key]?.trim())
      : [];
  const result = z.object(shape).safeParse(env);
  const problems = [
    ...unset.map((key) => `${key}: must be set when NODE_ENV=production (the default is for a developer machine)`),
    ...(result.success
      ? []
      : result.error.issues
          .filter((issue) => !unset.includes(String(issue.path[0])))
          .map((issue) => `${issue.path.join('.') || '(root)'}: ${issue.message}`)),
  ];
  if (problems.length > 0 || !result.success) throw new ConfigError(problems);
  return Object.freeze(result.data);
}
