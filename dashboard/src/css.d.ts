// esbuild bundles imported stylesheets into dashboard.css.
declare module "*.css";
