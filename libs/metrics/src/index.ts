export * from './metric-spec.js';
export * from './buckets.js';
export * from './platform.metrics.js';
export * from './vllm.metrics.js';
export * from './gen-ai.metrics.js';
export * from './worker.metrics.js';
export { metricSections, type MetricSection } from './catalog.js';
export {
  DASHBOARD_PANELS,
  DASHBOARD_VARIABLES,
  conveyorDashboard,
  type DashboardPanel,
  type DashboardQuery,
} from './grafana-dashboard.js';
