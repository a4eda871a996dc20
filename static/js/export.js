// Exports of the lab's view, for slides and course pages, all made in the browser from what
// the page already draws: the graph as a standalone SVG (its styles written into it as
// presentation attributes, system fonts, no stylesheet), every step of the run as numbered
// SVG frames in a zip (a small store-only writer with CRC-32), and the iframe snippet of
// the read-only embed. Loaded on demand by the lab's buttons (PRESENTER_ONLY in pages.py).

import * as graph from './views/graph.js';
import { timeline } from './store.js';
import { encodeProgram } from './url.js';

const SVG_NS = 'http://www.w3.org/2000/svg';
// The computed properties that make the drawing look as on the page; each becomes an SVG
// presentation attribute (not a style attribute: the page's CSP refuses those, and an SVG
// reader without CSS still reads these).
const PROPERTIES = ['fill', 'fill-opacity', 'stroke', 'stroke-width', 'stroke-dasharray', 'stroke-opacity',
                    'stroke-linecap', 'stroke-linejoin', 'opacity', 'font-family', 'font-size',
                    'font-weight', 'font-style', 'text-decoration', 'display', 'dominant-baseline'];
const OWN = new Map([['opacity', /^1$/], ['display', /^(?!none$)/], ['text-decoration', /^none\b/]]);

/** The graph `svg` as it shows now, as the text of a standalone SVG document. */
export function standaloneSvg(svg, background) {
  for (const animation of svg.getAnimations({ subtree: true })) animation.finish();
  const copy = svg.cloneNode(true);
  const originals = [svg, ...svg.querySelectorAll('*')];
  const copies = [copy, ...copy.querySelectorAll('*')];
  originals.forEach((original, i) => inline(original, copies[i], i > 0));
  const [, , width, height] = (svg.getAttribute('viewBox') ?? '0 0 0 0').split(/\s+/).map(Number);
  copy.setAttribute('xmlns', SVG_NS);
  copy.setAttribute('width', String(Math.ceil(width)));
  copy.setAttribute('height', String(Math.ceil(height)));
  copy.removeAttribute('id');
  copy.removeAttribute('aria-labelledby');
  copy.querySelector('title')?.removeAttribute('id');
  const rect = document.createElementNS(SVG_NS, 'rect');
  for (const [k, v] of Object.entries({ x: 0, y: 0, width, height, fill: background })) rect.setAttribute(k, String(v));
  copy.insertBefore(rect, copy.querySelector('title')?.nextSibling ?? copy.firstChild);
  return `<?xml version="1.0" encoding="UTF-8"?>\n${new XMLSerializer().serializeToString(copy)}\n`;
}

/** The computed properties the element does not inherit from its parent as they are
 * (opacity, display and text-decoration are not inherited: only their non-defaults). */
function inline(original, copy, inherited) {
  const style = getComputedStyle(original);
  const parent = inherited ? getComputedStyle(original.parentElement) : null;
  for (const name of PROPERTIES) {
    const value = style.getPropertyValue(name);
    if (!value || (parent && parent.getPropertyValue(name) === value && !OWN.has(name))) continue;
    if (OWN.get(name)?.test(value)) continue;
    copy.setAttribute(name, value);
  }
}

/** Every frame of the run drawn off screen, each as a standalone SVG: [[name, text], ...].
 * `ext` is the network views when the lab has them (bands, modules, heatmaps). */
export function frames(state, ext, background) {
  const host = offscreenHost(state);
  const count = timeline(state.run).count;
  const width = String(count - 1).length;
  const out = [];
  try {
    for (let k = 0; k < count; k++) {
      graph.render(host, { ...state, step: k, camera: null }, ext);
      const svg = host.querySelector('svg.graph');
      if (!svg.getAttribute('viewBox')) continue;     // a frame without a graph (summarized)
      out.push([`frame-${String(k).padStart(Math.max(3, width), '0')}.svg`, standaloneSvg(svg, background)]);
    }
  } finally {
    host.remove();
  }
  return out;
}

/** A `.graph-wrap` like the page's, off screen (rendered, so styles compute) and inert. */
function offscreenHost(state) {
  const host = document.createElement('div');
  host.className = 'graph-wrap';
  host.setAttribute('aria-hidden', 'true');
  host.inert = true;
  host.style.position = 'fixed';
  host.style.left = '-100000px';
  host.style.top = '0';
  host.style.width = `${state.box?.w ?? 800}px`;
  host.style.height = `${state.box?.h ?? 600}px`;
  const canvas = document.createElement('div');
  canvas.className = 'graph-canvas';
  const svg = document.createElementNS(SVG_NS, 'svg');
  svg.setAttribute('class', 'graph');
  const title = document.createElementNS(SVG_NS, 'title');
  title.textContent = 'The backward graph';
  svg.append(title);
  const overlay = document.createElement('div');
  overlay.className = 'overlay';
  canvas.append(svg, overlay);
  const empty = document.createElement('p');
  empty.className = 'graph-empty';
  const level = document.createElement('span');
  level.className = 'zoom-level';
  host.append(canvas, empty, level);
  document.body.append(host);
  return host;
}

// -- a zip of stored (uncompressed) files: PKWARE's APPNOTE, §4.3 -----------------------------

const CRC_TABLE = (() => {
  const table = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    table[n] = c >>> 0;
  }
  return table;
})();

export function crc32(bytes) {
  let c = 0xffffffff;
  for (let i = 0; i < bytes.length; i++) c = CRC_TABLE[(c ^ bytes[i]) & 0xff] ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

/** The zip file of `files` ([[name, text or bytes], ...]), each stored, names in UTF-8. */
export function zip(files, when = new Date()) {
  const encoder = new TextEncoder();
  const time = (when.getHours() << 11) | (when.getMinutes() << 5) | (when.getSeconds() >> 1);
  const date = ((Math.max(1980, when.getFullYear()) - 1980) << 9) | ((when.getMonth() + 1) << 5) | when.getDate();
  const parts = [];
  const central = [];
  let offset = 0;
  for (const [name, content] of files) {
    const nameBytes = encoder.encode(name);
    const data = typeof content === 'string' ? encoder.encode(content) : content;
    const fields = { crc: crc32(data), size: data.length, time, date, nameLength: nameBytes.length };
    const local = header(0x04034b50, fields, null);
    parts.push(local, nameBytes, data);
    central.push(header(0x02014b50, fields, offset), nameBytes);
    offset += local.length + nameBytes.length + data.length;
  }
  const centralSize = central.reduce((sum, part) => sum + part.length, 0);
  const end = new DataView(new ArrayBuffer(22));
  end.setUint32(0, 0x06054b50, true);
  end.setUint16(8, files.length, true);
  end.setUint16(10, files.length, true);
  end.setUint32(12, centralSize, true);
  end.setUint32(16, offset, true);
  return new Blob([...parts, ...central, new Uint8Array(end.buffer)], { type: 'application/zip' });
}

/** A local header (30 bytes) or, with the local header's offset, a central one (46). */
function header(signature, f, localOffset) {
  const central = localOffset !== null;
  const view = new DataView(new ArrayBuffer(central ? 46 : 30));
  let at = 0;
  const u16 = (v) => { view.setUint16(at, v, true); at += 2; };
  const u32 = (v) => { view.setUint32(at, v, true); at += 4; };
  u32(signature);
  if (central) u16(20);           // made by: version 2.0
  u16(20); u16(0x0800); u16(0);   // needed: 2.0; names in UTF-8; stored
  u16(f.time); u16(f.date); u32(f.crc); u32(f.size); u32(f.size); u16(f.nameLength); u16(0);
  if (central) { u16(0); u16(0); u16(0); u32(0); u32(localOffset); }
  return new Uint8Array(view.buffer);
}

// -- the embed's iframe -------------------------------------------------------------------------

const ATTRIBUTE = { '&': '&amp;', '"': '&quot;', '<': '&lt;', '>': '&gt;' };

/** The iframe snippet of /embed at this program and step, for a course page. */
export function embedCode(state, step, origin, title) {
  const params = new URLSearchParams({ p: encodeProgram(state.program), s: String(step),
                                       panels: 'code,narration', controls: 'step,play,scrub' });
  if (state.settings.theme !== 'auto') params.set('t', state.settings.theme);
  const label = `Autograd Lab: ${title || 'a PyTorch program'}, backward pass step by step`;
  const escape = (text) => text.replace(/[&"<>]/g, (c) => ATTRIBUTE[c]);
  return `<iframe src="${escape(`${origin}/embed?${params}`)}" title="${escape(label)}" `
    + 'width="960" height="540" loading="lazy"></iframe>';
}

/** Offer `blob` as a download named `name`. */
export function download(blob, name) {
  const url = URL.createObjectURL(blob);
  const link = document.createElement('a');
  link.href = url;
  link.download = name;
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}
