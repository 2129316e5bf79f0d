/** A file id that is not of our form: refused before it can reach any path. */
export class InvalidFileIdError extends Error {
  constructor(readonly id: string) {
    super(`Invalid file id '${id.slice(0, 80)}': file ids look like file-<letters and digits>.`);
    this.name = 'InvalidFileIdError';
  }
}

export class FileNotFoundError extends Error {
  constructor(readonly id: string) {
    super(`No such file: '${id}'.`);
    this.name = 'FileNotFoundError';
  }
}

export class FileTooLargeError extends Error {
  constructor(readonly maxBytes: number) {
    super(`The file is larger than the limit of ${maxBytes} bytes.`);
    this.name = 'FileTooLargeError';
  }
}
