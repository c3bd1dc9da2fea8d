/**
 * No container engine runs here, so the Dockerfile is checked as text: the
 * Docker language server's validator (dockerfile-utils) finds no problem, and
 * the image keeps its promises: multi-stage, every COPY source exists in the
 * repository and is not excluded by .dockerignore, not root at run time, a
 * health check on /healthz, and `node dist/src/main.js` as PID 1 in exec form (so
 * SIGTERM reaches the process that drains). The build itself is exercised by
 * production-build.test.ts (`npm run build && node dist/src/main.js`).
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { DockerfileParser, Env } from 'dockerfile-ast';
import { validate } from 'dockerfile-utils';
import { describe, expect, it } from 'vitest';

const ROOT = new URL('../..', import.meta.url).pathname;
const text = readFileSync(join(ROOT, 'Dockerfile'), 'utf8');
const dockerfile = DockerfileParser.parse(text);
const instructions = dockerfile.getInstructions();
const args = (i: (typeof instructions)[number]) => i.getArguments().map((a) => a.getValue());
const ignored = readFileSync(join(ROOT, '.dockerignore'), 'utf8')
  .split('\n')
  .map((line) => line.trim())
  .filter((line) => line !== '' && !line.startsWith('#'));

describe('the Dockerfile', () => {
  it('has no problem the Docker language server reports', () => {
    expect(validate(text).map((d) => `line ${d.range.start.line + 1}: ${d.message}`)).toEqual([]);
  });

  it('builds in one stage and runs in a second, without dev dependencies', () => {
    expect(dockerfile.getFROMs().map((f) => f.getBuildStage())).toEqual(['build', 'runtime']);
    const runtimeInstall = instructions.filter((i) => i.getKeyword() === 'RUN').at(-1)!;
    expect(args(runtimeInstall)).toContain('--omit=dev');
  });

  it('copies only what exists in the repository and what .dockerignore lets through', () => {
    const copies = instructions.filter((i) => i.getKeyword() === 'COPY' && !/--from=/.test(i.getTextContent()));
    const sources = copies.flatMap((i) => args(i).slice(0, -1));
    expect(sources.length).toBeGreaterThan(3);
    for (const source of sources) {
      expect(existsSync(join(ROOT, source)), source).toBe(true);
      expect(ignored.some((rule) => source === rule || source.startsWith(`${rule}/`)), `${source} is in .dockerignore`).toBe(false);
    }
  });

  it('runs as a non-root user, checks /healthz, and starts node itself as PID 1', () => {
    const last = (keyword: string) => instructions.filter((i) => i.getKeyword() === keyword).at(-1);
    expect(args(last('USER')!)).toEqual(['node']);
    expect(last('HEALTHCHECK')!.getTextContent()).toContain('/healthz');
    const cmd = last('CMD')!.getTextContent().replace(/^CMD\s+/, '');
    expect(JSON.parse(cmd)).toEqual(['node', '--max-semi-space-size=64', 'dist/src/main.js']);
    // The larger young generation is the image's, measured faster under load (the peer bench runs the Dockerfile's
    // flags); `npm start`, a developer's server that mostly idles, keeps Node's defaults (docs/performance.md).
    const start = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: { start: string } }).scripts.start;
    expect(start.split(/\s+/).filter((word) => word.startsWith('--max-'))).toEqual([]);
    expect(last('ENTRYPOINT')).toBeUndefined();
  });

  it('listens on every interface in the container: HOST=0.0.0.0 in the runtime stage, the gateway being local by default elsewhere', () => {
    const runtime = dockerfile.getFROMs().findIndex((f) => f.getBuildStage() === 'runtime');
    const runtimeLine = dockerfile.getFROMs()[runtime]!.getRange().start.line;
    const envs = instructions.filter((i): i is Env => i instanceof Env && i.getRange().start.line > runtimeLine);
    const set = Object.fromEntries(envs.flatMap((i) => i.getProperties().map((p) => [p.getName(), p.getValue()])));
    expect(set).toMatchObject({ HOST: '0.0.0.0', NODE_ENV: 'production' });
  });
});
