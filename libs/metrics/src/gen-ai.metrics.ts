import { FIRST_TOKEN_SECONDS, REQUEST_SECONDS, TOKEN_SECONDS } from './buckets.js';
import { histogram } from './metric-spec.js';

// OpenTelemetry's GenAI server metrics, as Prometheus names them (dots as underscores, the unit as a
// suffix), with the semantic conventions' attributes as labels.

/** What `gen_ai_provider_name` says: the server answering is this platform. */
export const GEN_AI_PROVIDER = 'conveyor';

export const GEN_AI_REQUEST_DURATION = histogram({
  name: 'gen_ai_server_request_duration_seconds',
  help: 'gen_ai.server.request.duration: time from accepting a request to its last event; error_type set when it failed',
  labels: ['gen_ai_operation_name', 'gen_ai_provider_name', 'gen_ai_request_model', 'error_type'],
  buckets: REQUEST_SECONDS,
});

export const GEN_AI_TIME_TO_FIRST_TOKEN = histogram({
  name: 'gen_ai_server_time_to_first_token_seconds',
  help: 'gen_ai.server.time_to_first_token: time from accepting a request to its first generated token',
  labels: ['gen_ai_operation_name', 'gen_ai_provider_name', 'gen_ai_request_model'],
  buckets: FIRST_TOKEN_SECONDS,
});

export const GEN_AI_TIME_PER_OUTPUT_TOKEN = histogram({
  name: 'gen_ai_server_time_per_output_token_seconds',
  help: 'gen_ai.server.time_per_output_token: time per generated token after the first, per successful reply',
  labels: ['gen_ai_operation_name', 'gen_ai_provider_name', 'gen_ai_request_model'],
  buckets: TOKEN_SECONDS,
});
