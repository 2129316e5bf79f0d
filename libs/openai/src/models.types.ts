export interface Model {
  id: string;
  object: 'model';
  created: number;
  owned_by: string;
  /** Conveyor's extra fields: whether any worker serves the model right now. */
  status: 'ready' | 'no_workers';
  live_workers: number;
  /** Set on an alias: the id of the deployment the name reaches. */
  alias_of?: string;
}

export interface ModelList {
  object: 'list';
  data: Model[];
}
