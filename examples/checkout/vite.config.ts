/**
 * `npm run example:dev` serves the checkout on http://localhost:5173 with
 * /graphql (HTTP and WebSocket) proxied to the gateway at GATEWAY_URL
 * (default http://localhost:4000, i.e. `npm start`), so the page is
 * same-origin with its API. `npm run example:build` writes a static build.
 */
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

const gateway = process.env.GATEWAY_URL ?? 'http://localhost:4000';
const proxy = { '/graphql': { target: gateway, ws: true, changeOrigin: true } };

export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  server: { proxy },
  preview: { proxy },
  build: { outDir: 'dist', emptyOutDir: true },
});
