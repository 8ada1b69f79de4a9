// The page imports htm as /ui/vendor/htm.js (served from node_modules by dashboard-assets.ts): its types are the package's.
export { default } from 'htm';
