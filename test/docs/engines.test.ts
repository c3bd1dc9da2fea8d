/**
 * The Node version package.json promises is one every installed package
 * accepts: a clean `npm ci` on it prints no EBADENGINE warning. Read from the
 * lockfile, which records each package's `engines`; optional packages (native
 * builds for other platforms and versions) are skipped by npm when they do
 * not fit, so they are left out.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';

// semver is what npm itself judges `engines` with; a transitive package here.
const semver = createRequire(import.meta.url)('semver') as {
  minVersion(range: string): { version: string } | null;
  satisfies(version: string, range: string): boolean;
};

const read = (path: string) => JSON.parse(readFileSync(new URL(`../../${path}`, import.meta.url), 'utf8')) as Record<string, unknown>;

describe('the Node version the project promises', () => {
  const promised = (read('package.json').engines as { node: string }).node;
  const floor = semver.minVersion(promised)!.version;

  it('is Node 20', () => {
    expect(floor).toMatch(/^20\./);
  });

  it('is accepted by every package the lockfile installs', () => {
    const packages = read('package-lock.json').packages as Record<string, { version?: string; optional?: boolean; engines?: { node?: string } }>;
    const refusing = Object.entries(packages)
      .filter(([path, p]) => path !== '' && !p.optional && p.engines?.node && !semver.satisfies(floor, p.engines.node))
      .map(([path, p]) => `${path.replace(/^.*node_modules\//, '')}@${p.version} wants node ${p.engines!.node}`);
    expect(refusing).toEqual([]);
  });
});
