import fs from 'node:fs';
import path from 'node:path';

const ROOT_PACKAGE = 'account-platform';

/**
 * The version of the running service: the root package's `version`, found by walking up from this
 * file, so it is the same from source, from `dist/` and inside an image.
 */
export function serviceVersion(from: string = __dirname): string {
  for (let dir = from; ; dir = path.dirname(dir)) {
    const candidate = path.join(dir, 'package.json');
    if (fs.existsSync(candidate)) {
      const manifest = JSON.parse(fs.readFileSync(candidate, 'utf8')) as { name?: string; version?: string };
      if (manifest.name === ROOT_PACKAGE && manifest.version) return manifest.version;
    }
    if (path.dirname(dir) === dir) return '0.0.0';
  }
}
