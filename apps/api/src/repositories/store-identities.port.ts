/** Which file store the API replicas on one Redis prefix share, recorded by the first to start. */
export abstract class StoreIdentities {
  /** Records `identity` unless another is recorded; returns the one recorded now. */
  abstract claim(identity: string): Promise<string>;
}
