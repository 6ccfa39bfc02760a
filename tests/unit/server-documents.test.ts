/**
 * The document listing (ts/server/documents.ts) while input/ changes under it: GET /documents
 * and the UI's GET /api/files list input/ with discovery, then read each file's size.
 */
import { unlink } from 'node:fs/promises';
import { describe, expect, it, vi } from 'vitest';
import { NodeConfig } from '../../ts/config/index.js';
import { listDocuments } from '../../ts/server/documents.js';
import { createProject } from '../helpers/project.js';

/** Runs after discovery and before the listing reads the sizes (the window of the race). */
let afterDiscovery: (() => Promise<void>) | undefined;

vi.mock('../../ts/indexing/discover.js', async (importOriginal) => {
  const real = await importOriginal<typeof import('../../ts/indexing/discover.js')>();
  return {
    ...real,
    discoverDocuments: async (...args: Parameters<typeof real.discoverDocuments>) => {
      const plan = await real.discoverDocuments(...args);
      await afterDiscovery?.();
      return plan;
    },
  };
});

describe('listDocuments', () => {
  it('leaves out a file deleted after discovery saw it, instead of failing the listing', async () => {
    const p = await createProject({ files: { 'kept.txt': 'Kept.', 'gone.txt': 'Deleted meanwhile.' } });
    const config = NodeConfig.fromMainFolder(p.root, { env: {} });
    afterDiscovery = () => unlink(p.path('input/gone.txt'));
    try {
      // An ENOENT from the deleted file answered 500 for the whole listing.
      const listing = await listDocuments(p.root, config);
      expect(listing.files.map((f) => [f.path, f.size])).toEqual([['kept.txt', 5]]);
    } finally {
      afterDiscovery = undefined;
    }
  });
});
