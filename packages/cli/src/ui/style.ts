/** The inspector's one stylesheet, inlined in every page (nothing is fetched from elsewhere). */
export const STYLE = `
:root { color-scheme: light; --fg: #1d2430; --muted: #637083; --line: #d8dee8; --bg: #f6f8fb;
  --ok: #2f9e5b; --bad: #d64541; --warn: #e0a100; --run: #3b7dd8; --idle: #8a94a6; }
* { box-sizing: border-box; }
body { margin: 0; font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; color: var(--fg); background: var(--bg); }
header { display: flex; gap: 24px; align-items: baseline; padding: 12px 24px; background: #1d2430; color: #fff; }
header a { color: #cfd8e6; text-decoration: none; } header a:hover { color: #fff; }
header .brand { font-weight: 700; color: #fff; } header .store { margin-left: auto; color: #9aa7ba; font-size: 12px; }
main { padding: 20px 24px; max-width: 1400px; }
h1 { font-size: 20px; margin: 0 0 12px; } h2 { font-size: 15px; margin: 24px 0 8px; }
table { border-collapse: collapse; width: 100%; background: #fff; border: 1px solid var(--line); }
th, td { text-align: left; padding: 5px 8px; border-bottom: 1px solid var(--line); vertical-align: top; }
th { background: #eef2f7; font-weight: 600; font-size: 12px; color: var(--muted); }
td.mono, .mono { font-family: ui-monospace, SFMono-Regular, Menlo, monospace; font-size: 12px; }
a { color: #2459b3; }
.status { display: inline-block; padding: 0 8px; border-radius: 10px; font-size: 12px; color: #fff; background: var(--idle); }
.status.completed { background: var(--ok); } .status.failed, .status.dead_lettered { background: var(--bad); }
.status.running { background: var(--run); } .status.suspended { background: var(--warn); color: #1d2430; }
.status.cancelled { background: #6b4fbb; }
form.filters { display: flex; gap: 12px; align-items: end; margin-bottom: 12px; }
label { display: flex; flex-direction: column; font-size: 12px; color: var(--muted); gap: 2px; }
input, select, textarea, button { font: inherit; padding: 4px 8px; border: 1px solid var(--line); border-radius: 4px; background: #fff; }
button { background: #2459b3; color: #fff; border-color: #2459b3; cursor: pointer; }
button.danger { background: var(--bad); border-color: var(--bad); }
.pager { display: flex; gap: 16px; margin: 10px 0; align-items: center; }
.fields { display: grid; grid-template-columns: max-content 1fr; gap: 4px 16px; background: #fff; border: 1px solid var(--line); padding: 12px; }
.fields dt { color: var(--muted); } .fields dd { margin: 0; }
.actions { display: flex; gap: 24px; margin: 16px 0; flex-wrap: wrap; }
.actions form { display: flex; gap: 8px; align-items: end; background: #fff; border: 1px solid var(--line); padding: 10px; }
.notice { padding: 8px 12px; margin-bottom: 12px; border-radius: 4px; background: #e6f4ea; border: 1px solid #b7dfc2; }
.notice.error { background: #fdecea; border-color: #f5c2bf; }
.readonly { color: var(--muted); font-size: 12px; }
.lane { position: relative; height: 16px; background: #eef2f7; border-radius: 3px; min-width: 320px; }
.bar { position: absolute; top: 2px; height: 12px; border-radius: 2px; min-width: 3px; background: var(--idle); }
.bar.completed { background: var(--ok); } .bar.failed { background: var(--bad); } .bar.retrying { background: var(--warn); }
.bar.running { background: var(--run); }
.err { color: var(--bad); font-size: 12px; }
.muted { color: var(--muted); }
`;
