// The status page's CSS (inline, allowed by its hash in the Content-Security-Policy) and its one
// small script (served from /ui/app.js: `script-src 'self'`, no inline script at all). No
// framework, no build step.

export const CSS = `:root{color-scheme:light;--fg:#1b1f24;--muted:#57606a;--line:#d0d7de;--bg:#fff;--soft:#f6f8fa;--ok:#116329;--warn:#7d4e00;--bad:#a40e26;--info:#0b4f9c}
*{box-sizing:border-box}body{margin:0;font:15px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;color:var(--fg);background:var(--bg)}
a{color:var(--info)}a:focus-visible,button:focus-visible,input:focus-visible{outline:3px solid var(--info);outline-offset:2px}
header.top{display:flex;flex-wrap:wrap;gap:.25rem 1rem;align-items:center;padding:.5rem 1.25rem;border-bottom:1px solid var(--line);background:var(--soft)}
header.top .brand{font-weight:700;margin-right:auto}header.top form{margin:0}
main{padding:1rem 1.25rem;max-width:1400px}h1{font-size:1.35rem;margin:.2rem 0 .6rem}h2{font-size:1.05rem;margin:1.4rem 0 .4rem}
.skip{position:absolute;left:-999px}.skip:focus{left:1rem;top:.5rem;background:var(--bg);padding:.25rem .5rem}
table{border-collapse:collapse;width:100%;font-size:.9rem}th,td{border-bottom:1px solid var(--line);padding:.3rem .5rem;text-align:left;vertical-align:top}
th{background:var(--soft);font-weight:600}td.num{font-variant-numeric:tabular-nums;white-space:nowrap}tbody.ord{border-top:2px solid var(--line)}
code,.mono{font-family:ui-monospace,SFMono-Regular,Menlo,monospace;font-size:.85em;overflow-wrap:anywhere}
.phase{display:inline-block;padding:0 .45rem;border-radius:1rem;font-weight:600;border:1px solid currentColor}
.p-Complete,.s-Updated,.s-Ready{color:var(--ok)}.p-Blocked,.s-Blocked,.s-Failed{color:var(--bad)}.p-Waiting,.s-InFlight{color:var(--warn)}.p-Progressing{color:var(--info)}
dl.facts{display:grid;grid-template-columns:max-content 1fr;gap:.2rem 1rem;margin:.4rem 0}dl.facts dt{color:var(--muted)}dl.facts dd{margin:0;overflow-wrap:anywhere}
progress{width:12rem;height:.9rem;vertical-align:middle}.muted{color:var(--muted)}.changed{font-weight:700}
.note{overflow-wrap:anywhere}td.nw code{white-space:nowrap;overflow-wrap:normal}.error{color:var(--bad)}
form.login{max-width:28rem;display:grid;gap:.5rem}input[type=password]{font:inherit;padding:.4rem;border:1px solid var(--muted);border-radius:4px}
button{font:inherit;padding:.3rem .8rem;border:1px solid var(--muted);border-radius:4px;background:var(--bg);color:var(--fg);cursor:pointer}
.live-status{font-size:.85rem}.scroll{overflow-x:auto;max-width:100%}.hint{border-left:3px solid var(--info);padding:.3rem .6rem;background:var(--soft)}.warning{border-left:3px solid var(--warn);padding:.3rem .6rem;background:var(--soft)}.warn{color:var(--warn)}
figure.chart{margin:.4rem 0 .8rem;padding:.25rem;max-width:40rem}.chart-svg{display:block;width:100%;height:auto;font-size:13px;fill:var(--fg)}
.chart-svg .axis,.chart-svg .note{fill:var(--muted)}.chart-svg line{stroke:var(--line)}.bar{fill:#e3b341}.bar.open{fill:#f5dfa0}.bar.pod{fill:#7fb2e8}
.m-w{fill:var(--info)}.m-r{fill:var(--ok)}.m-p{fill:#6f42c1}.st-blocked .bar{fill:var(--bad)}.key{font-size:.8rem}.key.bar{color:#e3b341}.key.m-w{color:var(--info)}.key.m-r{color:var(--ok)}.key.m-p{color:#6f42c1}
.track{fill:var(--soft);stroke:var(--line)}.fill{fill:var(--ok)}.over .fill{fill:var(--bad)}.chart-svg line.threshold{stroke:var(--fg);stroke-width:2;stroke-dasharray:4 3}figure.chart details{margin-top:.3rem}
pre{white-space:pre-wrap;overflow-wrap:anywhere;user-select:all;background:var(--soft);border:1px solid var(--line);border-radius:4px;padding:.4rem .6rem;margin:0}
.cmd{display:flex;gap:.5rem;align-items:flex-start;margin:.3rem 0}.cmd pre{flex:1;min-width:0}.times{font-weight:700}
@media (max-width:600px){main{padding:.75rem}header.top{padding:.5rem .75rem}progress{width:6rem}
table.stack,table.stack>tbody{display:block}table.stack>caption{display:block;text-align:left}table.stack>thead{position:absolute;left:-9999px}
table.stack tr{display:grid;grid-template-columns:repeat(6,minmax(0,1fr));column-gap:.6rem;padding:.35rem 0;border-bottom:1px solid var(--line)}
table.stack tr>*{display:block;grid-column:span 2;min-width:0;border:0;padding:.1rem 0;background:none;white-space:normal}
table.stack .half{grid-column:span 3}table.stack .wide{grid-column:1/-1}table.stack time{white-space:nowrap}
table.stack [data-label]::before{content:attr(data-label);margin-right:.4rem;font-size:.75rem;font-weight:400;color:var(--muted)}
table.stack .wide[data-label]{position:relative;padding-left:4.8rem}table.stack .wide[data-label]::before{position:absolute;left:0;top:.25rem;width:4.4rem}table.stack td[data-type=Normal]{display:none}table.stack .wide.note[data-label]{padding-left:0}table.stack .wide.note[data-label]::before{position:static}
table.stack tbody.ord{border-top:0}table.stack tbody.ord>tr:first-child{border-top:2px solid var(--line)}.cmd{flex-direction:column}}`;

/**
 * The page's script: follows the set's live fragment through server-sent events (EventSource
 * reconnects when the server ends a stream, as it does after a few updates), or polls it where
 * streaming is not there; swaps it in place and says so to screen readers, keeping focus and the
 * <details> that were open (by id: the timeline's table). An update that changes nothing (the first
 * one always repeats the page; compared as the browser parses both) touches nothing: a focused
 * link, a selection and a measured box stay. `data-updates` counts the updates received. A table
 * box that overflows (a narrow screen) is made a tab stop, so it can be scrolled from the keyboard.
 * A command's Copy button (hidden until this script runs) copies it, else selects it.
 */
export const SCRIPT = `(function(){"use strict";
var live=document.getElementById("live");if(!live)return;
var said=document.getElementById("live-status"),n=0,tpl=document.createElement("template");
function norm(h){tpl.innerHTML=h;return tpl.innerHTML;}
var last=norm(live.innerHTML);
function fit(){var b=document.querySelectorAll(".scroll"),i;for(i=0;i<b.length;i++){
if(b[i].scrollWidth>b[i].clientWidth)b[i].setAttribute("tabindex","0");else b[i].removeAttribute("tabindex");}
b=document.querySelectorAll("[data-copy][hidden]");for(i=0;i<b.length;i++)b[i].removeAttribute("hidden");}
fit();window.addEventListener("resize",fit);
document.addEventListener("click",function(e){var b=e.target.closest&&e.target.closest("[data-copy]");if(!b)return;
var p=b.parentNode.querySelector("pre"),t=p.textContent,ok=function(){b.textContent="Copied";if(said)said.textContent="Copied: "+t;setTimeout(function(){b.textContent="Copy";},2000);},
no=function(){getSelection().selectAllChildren(p);b.textContent="Selected: copy it";};
if(navigator.clipboard)navigator.clipboard.writeText(t).then(ok,no);else no();});
function swap(html){n++;live.setAttribute("data-updates",String(n));html=norm(html);if(html===last)return;last=html;
var f=document.activeElement,id=f&&live.contains(f)&&f.id?f.id:"",o=[],d=live.querySelectorAll("details[open][id]"),i;
for(i=0;i<d.length;i++)o.push(d[i].id);
live.innerHTML=html;
for(i=0;i<o.length;i++){d=document.getElementById(o[i]);if(d)d.setAttribute("open","");}
if(id){var g=document.getElementById(id);if(g)g.focus();}fit();
var h=live.querySelector("[data-headline]");if(said&&h)said.textContent="Updated: "+h.getAttribute("data-headline");}
function poll(){fetch(live.getAttribute("data-poll"),{credentials:"same-origin",headers:{accept:"text/html"}}).then(function(r){
if(r.status===401){location.reload();return"";}return r.ok?r.text():"";}).then(function(t){if(t)swap(t);},function(){});}
var every=Number(live.getAttribute("data-every"))||2;
if(window.EventSource&&live.getAttribute("data-stream")){var es=new EventSource(live.getAttribute("data-stream"));
es.addEventListener("view",function(e){swap(e.data);});
es.addEventListener("denied",function(){es.close();location.reload();});
es.onerror=function(){if(es.readyState===2){es.close();setInterval(poll,every*1000);}};}
else setInterval(poll,every*1000);})();`;

/** `'sha256-<base64>'` of a text, as a Content-Security-Policy source. */
export async function cspHash(text: string): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text)));
  let binary = "";
  for (const b of digest) binary += String.fromCharCode(b);
  return `'sha256-${btoa(binary)}'`;
}
