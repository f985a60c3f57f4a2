//! The page around the sections: doctype, a Content-Security-Policy that allows no request at
//! all (the page is one file), the inline stylesheet (light, dark, print) and the inline script
//! (sorting and expanding only; everything is readable without it).

use sha2::{Digest, Sha256};

use super::escape::{base64, esc};

/// Light and dark palettes, the charts' colours, the source view, print rules.
const CSS: &str = r#"
:root{--bg:#fff;--fg:#1b1f24;--muted:#59636e;--line:#d1d9e0;--panel:#f6f8fa;--accent:#0969da;
--good:#1a7f37;--warn:#9a6700;--bad:#cf222e;--cov:#dafbe1;--miss:#ffebe9;--part:#fff8c5;
--c0:#0969da;--c1:#bf3989;--c2:#1a7f37;--c3:#9a6700;--c4:#8250df;--c5:#cf222e;color-scheme:light dark}
@media (prefers-color-scheme:dark){:root{--bg:#0d1117;--fg:#e6edf3;--muted:#9198a1;--line:#3d444d;
--panel:#151b23;--accent:#4493f8;--good:#3fb950;--warn:#d29922;--bad:#f85149;--cov:#12361f;
--miss:#4a1d1f;--part:#3d3112;--c0:#4493f8;--c1:#db61a2;--c2:#3fb950;--c3:#d29922;--c4:#ab7df8;--c5:#f85149}}
*{box-sizing:border-box}
body{margin:0 auto;max-width:1200px;padding:1.5rem;background:var(--bg);color:var(--fg);
font:15px/1.5 system-ui,-apple-system,"Segoe UI",sans-serif}
h1{font-size:1.6rem;margin:.2rem 0 1rem}h2{font-size:1.25rem;margin:2rem 0 .6rem;padding-bottom:.3rem;border-bottom:1px solid var(--line)}
h3{font-size:1.05rem;margin:1.2rem 0 .4rem}
nav{display:flex;flex-wrap:wrap;gap:.3rem .9rem;font-size:.9rem;margin-bottom:1rem}
a{color:var(--accent)}
.muted{color:var(--muted)}
.cards{display:flex;flex-wrap:wrap;gap:.8rem;margin:.5rem 0 1rem}
.card{background:var(--panel);border:1px solid var(--line);border-radius:8px;padding:.6rem .9rem;min-width:9rem}
.card b{display:block;font-size:1.5rem}
.scroll{overflow-x:auto;margin:.4rem 0 1rem}
table{border-collapse:collapse;font-size:.88rem;min-width:50%}
th,td{border:1px solid var(--line);padding:.25rem .5rem;text-align:left;vertical-align:top}
th{background:var(--panel)}
td.n,th.n{text-align:right;font-variant-numeric:tabular-nums}
table.sortable th{cursor:pointer;user-select:none}
table.sortable th[data-dir=asc]::after{content:" ▲"}table.sortable th[data-dir=desc]::after{content:" ▼"}
code,pre{font:12.5px/1.45 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace}
code{background:var(--panel);padding:0 .2rem;border-radius:3px;overflow-wrap:anywhere}
.Met,.good{color:var(--good)}.Below,.bad{color:var(--bad)}.warn{color:var(--warn)}
svg{max-width:100%;height:auto;display:block}
svg text{fill:var(--fg);font:11px system-ui,sans-serif}
svg .axis{stroke:var(--line)}svg .grid{stroke:var(--line);stroke-dasharray:2 3}
svg .s0{stroke:var(--c0);fill:var(--c0)}svg .s1{stroke:var(--c1);fill:var(--c1)}svg .s2{stroke:var(--c2);fill:var(--c2)}
svg .s3{stroke:var(--c3);fill:var(--c3)}svg .s4{stroke:var(--c4);fill:var(--c4)}svg .s5{stroke:var(--c5);fill:var(--c5)}
svg polyline{fill:none;stroke-width:2}svg .target{stroke-dasharray:6 4;stroke-width:1.5;fill:none}
svg .bar{stroke:none}svg .running{opacity:.55}
.legend{display:flex;flex-wrap:wrap;gap:.8rem;font-size:.85rem;margin:.3rem 0}
.legend i{display:inline-block;width:.8rem;height:.8rem;border-radius:2px;margin-right:.3rem;vertical-align:-1px}
.k0{background:var(--c0)}.k1{background:var(--c1)}.k2{background:var(--c2)}.k3{background:var(--c3)}.k4{background:var(--c4)}.k5{background:var(--c5)}
.charts{display:grid;grid-template-columns:repeat(auto-fit,minmax(340px,1fr));gap:1rem}
figure{margin:0;background:var(--panel);border:1px solid var(--line);border-radius:8px;padding:.6rem}
figcaption{font-weight:600;margin-bottom:.3rem}
details>summary{cursor:pointer}
tbody.file>tr.src>td{padding:0;border-top:0}
tbody.file>tr.src summary{padding:.15rem .5rem;font-size:.8rem;color:var(--muted)}
pre.src{margin:0;max-height:70vh;overflow:auto;counter-reset:l;background:var(--bg);border-top:1px solid var(--line)}
pre.src>span{display:block;padding-right:1rem;white-space:pre}
pre.src>span::before{counter-increment:l;content:counter(l);display:inline-block;width:3.5em;margin-right:.8em;
padding-right:.4em;text-align:right;color:var(--muted);border-right:3px solid transparent}
pre.src>.c{background:var(--cov)}pre.src>.c::before{border-right-color:var(--good)}
pre.src>.m{background:var(--miss)}pre.src>.m::before{border-right-color:var(--bad)}
pre.src>.p{background:var(--part)}pre.src>.p::before{border-right-color:var(--warn)}
.sw{display:inline-block;width:.8rem;height:.8rem;vertical-align:-1px;border:1px solid var(--line)}
.sw.c{background:var(--cov)}.sw.m{background:var(--miss)}.sw.p{background:var(--part)}
.meter{display:inline-block;width:8rem;height:.6rem;background:var(--panel);border:1px solid var(--line);border-radius:3px;vertical-align:middle}
.meter>span{display:block;height:100%;background:var(--c0);border-radius:2px}
.defect{border-left:4px solid var(--bad);background:var(--panel);padding:.4rem .8rem;margin:.6rem 0;border-radius:0 6px 6px 0}
.defect pre{white-space:pre-wrap;overflow-wrap:anywhere;margin:.3rem 0}
.js-only{display:none}
@media print{body{max-width:none;padding:0;font-size:11pt}nav,.js-only,button{display:none!important}
h2{break-after:avoid}tr,figure,.defect{break-inside:avoid}.scroll{overflow:visible}pre.src{max-height:none}
a{color:inherit;text-decoration:none}}
"#;

/// Sorts a table by a clicked header (numbers by `data-v`), and opens or closes every source view.
const JS: &str = r#"
document.querySelectorAll('.js-only').forEach(e=>e.style.display='inline-block');
document.querySelectorAll('table.sortable').forEach(t=>{t.querySelectorAll('thead th').forEach((th,i)=>{
th.tabIndex=0;const go=()=>{const dir=th.dataset.dir==='asc'?'desc':'asc';
t.querySelectorAll('thead th').forEach(h=>delete h.dataset.dir);th.dataset.dir=dir;
const key=b=>{const c=b.rows[0].cells[i];return c.dataset.v!==undefined?parseFloat(c.dataset.v):c.textContent.trim()};
const bodies=[...t.tBodies];bodies.sort((a,b)=>{const x=key(a),y=key(b);
const c=(typeof x==='number'&&typeof y==='number')?x-y:String(x).localeCompare(String(y));return dir==='asc'?c:-c});
bodies.forEach(b=>t.appendChild(b))};th.addEventListener('click',go);
th.addEventListener('keydown',e=>{if(e.key==='Enter'||e.key===' '){e.preventDefault();go()}})})});
document.querySelectorAll('button[data-open]').forEach(b=>b.addEventListener('click',()=>{
const open=b.dataset.open==='1';document.querySelectorAll(b.dataset.sel).forEach(d=>d.open=open)}));
"#;

/// The whole page: `title` (project text, escaped here) and `body` (already HTML).
pub fn page(title: &str, body: &str) -> String {
    let hash = base64(&Sha256::digest(JS.as_bytes()));
    let mut out = String::with_capacity(body.len() + CSS.len() + JS.len() + 1024);
    out.push_str("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n");
    // No source of any kind but this file: nothing can be fetched, no injected script runs.
    out.push_str(&format!(
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; script-src 'sha256-{hash}'; img-src data:\">\n"
    ));
    out.push_str("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n");
    out.push_str("<meta name=\"color-scheme\" content=\"light dark\">\n");
    out.push_str(&format!("<title>{}</title>\n<style>", esc(title)));
    out.push_str(CSS);
    out.push_str("</style></head>\n<body>\n");
    out.push_str(body);
    out.push_str("<script>");
    out.push_str(JS);
    out.push_str("</script>\n</body></html>\n");
    out
}
