/// <reference types="vitest" />
import { defineConfig } from 'vite';
import react from '@vitejs/plugin-react';

// `npm run dev` forwards /api to a running `nodeflow serve` (NODEFLOW_SERVE,
// default http://127.0.0.1:8765); `npm run build` writes dist/, which the
// server serves as static files (docs/editor.md).
export default defineConfig({
  base: './',
  plugins: [react()],
  server: {
    proxy: { '/api': process.env.NODEFLOW_SERVE ?? 'http://127.0.0.1:8765' },
  },
  build: { outDir: 'dist', chunkSizeWarningLimit: 1500 },
  test: {
    include: ['test/**/*.test.ts'],
    environment: 'node',
  },
});
