/**
 * The memory page: one HTML document and one script, served by the daemon (no CDN: it works
 * offline). Every piece of memory text, and every chat name, reaches the page through
 * textContent or SVG text nodes, never innerHTML, so a message holding `<script>` shows as
 * those characters. The script is three parts: the frame (chat list, tabs, the address in the
 * URL hash), the tabs, the charts.
 *
 * Layout: the chat list on the left (topics under their group), the chosen chat's sections as
 * tabs, one shown at a time. Under 760 px wide the list folds behind a "Chats" button in a top
 * bar and the content takes the whole width.
 */
import { FRAME_JS } from './script-frame.js';
import { TABS_JS } from './script-tabs.js';
import { CHARTS_JS } from './script-charts.js';

const CSS = `
:root{--bg:#f5f6fa;--card:#fff;--line:#e2e5ee;--text:#1c2130;--muted:#667085;--accent:#4f46e5;--accent-soft:#eef0ff;--danger:#c62828;--danger-soft:#fdecec;--ok:#177245;--ok-soft:#e7f6ed;--warn-soft:#fff6db}
*{box-sizing:border-box}
html{-webkit-text-size-adjust:100%}
body{margin:0;font:15px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:var(--text);background:var(--bg)}
button,input,textarea{font:inherit;color:inherit}
button{cursor:pointer;border:1px solid var(--line);background:var(--card);border-radius:8px;padding:7px 14px;font-weight:550}
button:hover{border-color:#c5cada;background:#fafbff}
button.primary{background:var(--accent);border-color:var(--accent);color:#fff}
button.primary:hover{background:#4338ca}
button.danger{background:var(--danger);border-color:var(--danger);color:#fff}
button.danger:hover{background:#a61f1f}
button.small{padding:3px 10px;font-size:13px}
input[type=search],input[type=text]{border:1px solid var(--line);border-radius:8px;padding:8px 11px;background:#fff;min-width:0}
input:focus,textarea:focus,button:focus-visible,a:focus-visible{outline:2px solid var(--accent);outline-offset:1px}
code{font:13px ui-monospace,SFMono-Regular,Menlo,monospace;background:#f0f1f6;border-radius:4px;padding:1px 5px;overflow-wrap:anywhere}
#topbar{display:none}
#layout{display:flex;min-height:100vh}
#sidebar{width:290px;flex:none;background:var(--card);border-right:1px solid var(--line);padding:18px 12px;position:sticky;top:0;height:100vh;overflow-y:auto}
.brand{font-size:17px;font-weight:700;padding:0 8px 14px;letter-spacing:-.01em}.brand span{color:var(--muted);font-weight:500}
.chat-list,.topics{list-style:none;margin:0;padding:0}
.topics{margin:0 0 4px 22px;border-left:2px solid var(--line);padding-left:6px}
.chat{display:flex;gap:10px;align-items:center;width:100%;text-align:left;border:0;background:none;border-radius:10px;padding:8px;font-weight:400}
.chat:hover{background:#f3f4f8}
.chat.on{background:var(--accent-soft);box-shadow:inset 3px 0 0 var(--accent)}
.chat.header{cursor:default;color:var(--muted)}
.chat.header:hover{background:none}
.chat-text{min-width:0;flex:1}
.chat-name{display:block;font-weight:600;white-space:nowrap;overflow:hidden;text-overflow:ellipsis}
.chat-meta{display:block;font-size:12.5px;color:var(--muted)}
.avatar{flex:none;width:34px;height:34px;border-radius:50%;display:grid;place-items:center;color:#fff;font-weight:700;font-size:15px}
.avatar.topic{width:26px;height:26px;border-radius:8px;font-size:13px}
.avatar.big{width:52px;height:52px;font-size:22px}
.c0{background:#4f46e5}.c1{background:#0e7490}.c2{background:#b45309}.c3{background:#be185d}.c4{background:#15803d}.c5{background:#7c3aed}
.unnamed .chat-name,#chat-name.unnamed{font-style:italic;color:var(--muted)}
main{flex:1;min-width:0;padding:26px 34px 40px;max-width:1120px}
.chat-head{display:flex;gap:16px;align-items:flex-start;flex-wrap:wrap}
.chat-head>div{flex:1;min-width:0}
h1{font-size:24px;line-height:1.2;margin:2px 0 4px;letter-spacing:-.015em;overflow-wrap:anywhere}
.sub{margin:0;color:var(--muted)}
details.more{font-size:13.5px;color:var(--muted)}
details.more summary{cursor:pointer;user-select:none}
details.more[open]{background:#f8f9fc;border:1px solid var(--line);border-radius:8px;padding:6px 10px;margin-top:4px}
dl.kv{display:grid;grid-template-columns:auto 1fr;gap:2px 12px;margin:6px 0 2px}dl.kv dt{font-weight:600}dl.kv dd{margin:0;min-width:0;overflow-wrap:anywhere}
.tabs{display:flex;flex-wrap:wrap;gap:4px;margin:20px 0 18px;border-bottom:1px solid var(--line)}
.tabs a{padding:9px 13px;color:var(--muted);text-decoration:none;font-weight:600;border-bottom:2px solid transparent;margin-bottom:-1px;border-radius:6px 6px 0 0}
.tabs a:hover{color:var(--text);background:#eceef5}
.tabs a[aria-selected=true]{color:var(--accent);border-bottom-color:var(--accent)}
.card{background:var(--card);border:1px solid var(--line);border-radius:12px;padding:18px 20px;margin:0 0 16px;box-shadow:0 1px 2px rgba(16,24,40,.04)}
.card h2{font-size:16px;margin:0 0 4px}
.card>p.lead{margin:0 0 14px;color:var(--muted)}
.stats{display:grid;grid-template-columns:repeat(auto-fit,minmax(165px,1fr));gap:12px;margin:0 0 16px}
.stat{display:block;background:var(--card);border:1px solid var(--line);border-radius:12px;padding:14px 16px;color:inherit;text-decoration:none}
a.stat:hover{border-color:#c5cada;box-shadow:0 2px 6px rgba(16,24,40,.06)}
.stat b{display:block;font-size:24px;line-height:1.15}.stat span{color:var(--muted);font-size:13.5px}
.row{display:flex;gap:8px;align-items:center;flex-wrap:wrap;margin:10px 0}
.row input{flex:1 1 220px}
textarea{width:100%;min-height:300px;border:1px solid var(--line);border-radius:10px;padding:12px 14px;font:14px/1.55 ui-monospace,SFMono-Regular,Menlo,monospace;resize:vertical}
pre{white-space:pre-wrap;overflow-wrap:anywhere;margin:6px 0;font:13px/1.5 ui-monospace,SFMono-Regular,Menlo,monospace;background:#f7f8fb;border:1px solid #eceef4;padding:9px 11px;border-radius:8px;max-height:320px;overflow:auto}
.muted{color:var(--muted)}.err{color:var(--danger)}.ok{color:var(--ok)}
.note{border-radius:10px;padding:12px 14px;margin:12px 0}
.note.warn{background:var(--warn-soft);border:1px solid #f1dc9c}.note.danger{background:var(--danger-soft);border:1px solid #f4c7c7}.note.good{background:var(--ok-soft);border:1px solid #bfe3cc}
.note ul{margin:6px 0 8px;padding-left:20px}.note>p:first-child{margin-top:0}.note>:last-child{margin-bottom:0}
.list{list-style:none;margin:0;padding:0}
.list>li{padding:12px 0;border-top:1px solid var(--line)}.list>li:first-child{border-top:0}
.meta{font-size:13px;color:var(--muted);margin-top:3px}
.pill{display:inline-block;border-radius:999px;padding:1px 9px;font-size:12px;font-weight:600;background:#eef0f5;color:#3b4252;margin-right:4px}
.pill.strong{background:#dcfce7;color:#166534}.pill.good{background:#e0e7ff;color:#3730a3}.pill.weak{background:#f1f2f6;color:#6b7280}
.retired .fact-content{text-decoration:line-through;color:var(--muted)}
.fact-actions{display:flex;gap:6px;flex-wrap:wrap;margin-top:8px}
.msg{padding:10px 0}.msg .who{font-weight:650}.msg .body{white-space:pre-wrap;overflow-wrap:anywhere;margin-top:2px}
.msg.bot .who{color:var(--accent)}.summary{background:var(--warn-soft);border-radius:10px;padding:10px 12px!important;border:0!important;margin:6px 0}
.diff{font:13px/1.55 ui-monospace,SFMono-Regular,Menlo,monospace;border:1px solid var(--line);border-radius:8px;overflow:hidden;margin:10px 0;background:#fff}
.diff div{padding:1px 10px;white-space:pre-wrap;overflow-wrap:anywhere}
.diff .add{background:#e9f8ee;color:#14532d}.diff .del{background:#fdeeee;color:#7f1d1d}.diff .fold{color:var(--muted);background:#f7f8fb;font-style:italic}
.chart svg{display:block;width:100%;height:auto}
.legend{display:flex;flex-wrap:wrap;gap:4px 14px;font-size:13px;color:var(--muted);margin-top:6px}
.legend i{display:inline-block;width:10px;height:10px;border-radius:3px;margin-right:5px;vertical-align:-1px}
.versions a{color:var(--accent);font-weight:600}
.entities{display:flex;flex-wrap:wrap;gap:8px}.entities details{background:#f7f8fb;border:1px solid var(--line);border-radius:10px;padding:6px 10px}
.entities summary{cursor:pointer}.entities ul{margin:6px 0 2px;padding-left:18px;font-size:13.5px;color:var(--muted)}
.empty{color:var(--muted);padding:40px 0;text-align:center}
@media (max-width:760px){
 #topbar{display:flex;align-items:center;gap:10px;position:sticky;top:0;z-index:5;background:var(--card);border-bottom:1px solid var(--line);padding:8px 12px;height:54px}
 #topbar-title{font-weight:650;white-space:nowrap;overflow:hidden;text-overflow:ellipsis;min-width:0}
 #sidebar{display:none;position:fixed;top:54px;left:0;right:0;bottom:0;width:auto;height:auto;z-index:4;border-right:0}
 body.menu-open #sidebar{display:block}
 main{padding:16px 14px 32px}
 .chat-head .avatar.big{display:none}
 h1{font-size:21px}
 .tabs{margin:14px 0;gap:2px}.tabs a{padding:7px 9px;font-size:14px}
 .card{padding:14px}
 .stats{grid-template-columns:1fr 1fr;gap:10px}.stat b{font-size:20px}
}
`;

export const PAGE_HTML = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>membot — memory</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>${CSS}</style></head>
<body>
<header id="topbar"><button id="menu" aria-controls="sidebar" aria-expanded="false">☰ Chats</button><span id="topbar-title">membot memory</span></header>
<div id="layout">
<nav id="sidebar" aria-label="Chats"><div class="brand">membot <span>memory</span></div><ul id="chats" class="chat-list"><li class="muted">Loading…</li></ul></nav>
<main id="main"><p class="empty">Pick a chat on the left to see what the bot remembers of it.</p></main>
</div>
<script src="/app.js"></script></body></html>
`;

export const PAGE_JS = [FRAME_JS, TABS_JS, CHARTS_JS].join('\n');
