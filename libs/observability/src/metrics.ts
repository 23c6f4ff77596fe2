import { collectDefaultMetrics, Registry } from 'prom-client';

/** One registry a process, labelled with the service name, with Node's default metrics. */
export function createMetricsRegistry(service: string): Registry {
  const registry = new Registry();
  registry.setDefaultLabels({ service });
  collectDefaultMetrics({ register: registry });
  // Gauges named like counters (`promtool check metrics` flags them); the same counts stay in
  // nodejs_active_handles / _requests / _resources, by type.
  for (const name of ['nodejs_active_handles_total', 'nodejs_active_requests_total', 'nodejs_active_resources_total']) {
    registry.removeSingleMetric(name);
  }
  return registry;
}
