// The page imports Preact as /ui/vendor/preact.js (served from node_modules by dashboard-assets.ts): its types are the package's.
export * from 'preact';
