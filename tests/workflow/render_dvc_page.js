// Renders every plot of a `dvc plots show` page to SVG in node, with no network: the page's own
// inline scripts load Vega, Vega-Lite and vega-embed into a sandbox that has no fetch,
// XMLHttpRequest or require; then each plot's `vegaEmbed(id, spec)` call (which needs a DOM) hands
// its spec to Vega-Lite, then to a headless Vega view. Prints one JSON line: [{id, marks, texts}] per plot (marks: SVG <path> elements).
// Usage: node render_dvc_page.js PAGE.html
"use strict";
const fs = require("fs");
const vm = require("vm");

const page = fs.readFileSync(process.argv[2], "utf8");
const scripts = [...page.matchAll(/<script([^>]*)>([\s\S]*?)<\/script>/g)];
for (const [, attrs] of scripts) {
  if (/\bsrc\s*=/.test(attrs)) throw new Error(`the page loads a script: <script${attrs}>`);
}
const sandbox = { console, setTimeout, clearTimeout, Promise };
vm.createContext(sandbox);
const plots = scripts.map((m) => m[2]).filter((body) => body.includes("var spec ="));
for (const [, , body] of scripts) if (!plots.includes(body)) vm.runInContext(body, sandbox);
for (const lib of ["vega", "vegaLite", "vegaEmbed"]) {
  if (typeof sandbox[lib] === "undefined") throw new Error(`${lib} did not load`);
}
const embeds = [];
sandbox.vegaEmbed = (id, spec) => embeds.push({ id, spec });
for (const body of plots) vm.runInContext(body, sandbox);

(async () => {
  const out = [];
  for (const { id, spec } of embeds) {
    const compiled = sandbox.vegaLite.compile(spec).spec;
    const view = new sandbox.vega.View(sandbox.vega.parse(compiled), { renderer: "none" });
    const svg = await view.toSVG();
    const texts = [...svg.matchAll(/<text[^>]*>([^<]*)<\/text>/g)].map((m) => m[1]);
    out.push({ id, marks: (svg.match(/<path/g) || []).length, texts });
  }
  console.log(JSON.stringify(out));
})().catch((e) => {
  console.error(e.stack || String(e));
  process.exit(1);
});
