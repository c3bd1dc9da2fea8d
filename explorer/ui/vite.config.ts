/**
 * Builds the bundled explorer into explorer/assets (committed): the
 * gateway serves it with no network and no build step at install or start.
 * The HTML is written by the gateway from manifest.json, so base is relative.
 */
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';
import react from '@vitejs/plugin-react';

const here = fileURLToPath(new URL('.', import.meta.url));

export default defineConfig({
  root: here,
  base: './',
  logLevel: 'warn',
  plugins: [react()],
  define: { 'process.env.NODE_ENV': JSON.stringify('production') },
  build: {
    outDir: fileURLToPath(new URL('../assets', import.meta.url)),
    emptyOutDir: true,
    manifest: 'manifest.json',
    assetsDir: '',
    // Served from the gateway's own origin; no source maps to keep the committed bundle small.
    sourcemap: false,
    chunkSizeWarningLimit: 4096,
    rollupOptions: { input: fileURLToPath(new URL('./main.tsx', import.meta.url)) },
  },
});
