/** Where the queue dashboard is served; apart from the plugin so specs can name it without loading Bull Board. */
export const QUEUE_DASHBOARD_PATH = '/admin/queues';
