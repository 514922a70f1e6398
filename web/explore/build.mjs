// Builds the page of `polybook explore` into ../../assets/explore/, which the binary embeds:
// explore.js (this page's script with chessground and chessops, bundled and minified),
// explore.css (the page's style sheet with chessground's, whose board and cburnett pieces are
// data URIs). index.html and favicon.svg are not built: they are edited where the binary embeds
// them, in ../../assets/explore/.
//
//   npm ci && npm run build
import * as esbuild from 'esbuild';
import { mkdirSync } from 'node:fs';

const out = '../../assets/explore';
mkdirSync(out, { recursive: true });
// What the bundles hold, and under which licences (the sources carry no licence comments of
// their own to keep).
const banner =
  '/*! polybook explore, GPL-3.0-or-later; source: web/explore/ in the polybook repository.\n' +
  ' * Bundles chessground 9.2.1 (GPL-3.0-or-later, lichess.org), its brown board and the cburnett\n' +
  ' * pieces by Colin M.L. Burnett (GPL-2.0-or-later), chessops 0.15.1 (GPL-3.0-or-later,\n' +
  ' * Niklas Fiekas) and @badrap/result (MIT). */';
const common = {
  banner: { js: banner, css: banner },
  bundle: true,
  minify: true,
  legalComments: 'eof',
  logLevel: 'info',
};
await esbuild.build({
  ...common,
  entryPoints: ['src/explore.js'],
  outfile: `${out}/explore.js`,
  format: 'iife',
  target: ['es2020'],
});
await esbuild.build({
  ...common,
  entryPoints: ['src/explore.css'],
  outfile: `${out}/explore.css`,
});
