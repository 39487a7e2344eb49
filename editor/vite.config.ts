/// <reference types="vitest" />
import { defineConfig } from 'vite';
import react from '@vitejs/plugin-react';

// `npm run dev` forwards /api to a running `nodeflow serve` (NODEFLOW_SERVE,
// default http://127.0.0.1:8765) as if the page came from the server (its
// Host and Origin checks refuse other origins, docs/server.md); `npm run
// build` writes dist/, which the server serves as static files
// (docs/editor.md).
export default defineConfig({
  base: './',
  plugins: [react()],
  server: {
    proxy: {
      '/api': {
        target: process.env.NODEFLOW_SERVE ?? 'http://127.0.0.1:8765',
        changeOrigin: true,
        configure: (proxy) => proxy.on('proxyReq', (req) => req.removeHeader('origin')),
      },
    },
  },
  build: { outDir: 'dist', chunkSizeWarningLimit: 1500 },
  test: {
    include: ['test/**/*.test.ts'],
    environment: 'node',
  },
});
