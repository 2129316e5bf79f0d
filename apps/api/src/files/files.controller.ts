import { Controller, Delete, Get, HttpCode, Inject, Param, Post, Query, Req, StreamableFile } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
// Adds request.parts() and request.isMultipart() to Fastify's request type.
import type {} from '@fastify/multipart';
import { PLATFORM_CONFIG, type PlatformConfig } from '@conveyor/config';
import { FileStore, assertFileId } from '@conveyor/batch-store';
import type { FileDeleted, FileObject, ListPage } from '@conveyor/openai';
import { UseAuthScheme } from '../auth/auth-scheme.decorator.js';
import { Caller } from '../auth/caller.decorator.js';
import { OpenAiHttpError } from '../errors/openai-http.error.js';
import { FilesService, toFileObject } from './files.service.js';

const PURPOSES = ['batch'];

/** OpenAI's Files API, for batch input and output. */
@Controller('v1/files')
@UseAuthScheme('Bearer')
export class FilesController {
  constructor(
    @Inject(PLATFORM_CONFIG) private readonly config: PlatformConfig,
    private readonly files: FilesService,
    private readonly store: FileStore,
  ) {}

  @Post()
  @HttpCode(200)
  async upload(@Req() req: FastifyRequest, @Caller() owner: string): Promise<FileObject> {
    if (!req.isMultipart()) throw OpenAiHttpError.invalidRequest('Upload the file as multipart/form-data with fields "file" and "purpose".', 'file');
    let purpose: string | undefined;
    let saved: FileObject | undefined;
    for await (const part of req.parts()) {
      if (part.type === 'field' && part.fieldname === 'purpose') purpose = String(part.value);
      else if (part.type === 'file' && part.fieldname === 'file' && !saved) {
        // Streamed to the store as it arrives: a 200 MB upload is never held in memory.
        saved = toFileObject(await this.store.save({ filename: part.filename, purpose: purpose ?? 'batch', owner }, part.file, this.config.batch.maxFileBytes));
      } else if (part.type === 'file') part.file.resume();
    }
    if (!saved) throw OpenAiHttpError.invalidRequest('Missing the "file" field.', 'file');
    if (!purpose || !PURPOSES.includes(purpose)) {
      await this.store.delete(saved.id);
      throw OpenAiHttpError.invalidRequest(`purpose must be one of: ${PURPOSES.join(', ')}.`, 'purpose');
    }
    return saved.purpose === purpose ? saved : { ...saved, purpose: purpose as FileObject['purpose'] };
  }

  @Get()
  async list(@Caller() owner: string, @Query('purpose') purpose?: string): Promise<ListPage<FileObject>> {
    const data = await this.files.list(owner, purpose);
    return { object: 'list', data, first_id: data[0]?.id ?? null, last_id: data.at(-1)?.id ?? null, has_more: false };
  }

  @Get(':id')
  async get(@Param('id') id: string, @Caller() owner: string): Promise<FileObject> {
    return toFileObject(await this.files.get(owner, assertFileId(id)));
  }

  @Get(':id/content')
  async content(@Param('id') id: string, @Caller() owner: string): Promise<StreamableFile> {
    return new StreamableFile(await this.files.content(owner, assertFileId(id)), { type: 'application/jsonl' });
  }

  @Delete(':id')
  @HttpCode(200)
  async delete(@Param('id') id: string, @Caller() owner: string): Promise<FileDeleted> {
    await this.files.delete(owner, assertFileId(id));
    return { id, object: 'file', deleted: true };
  }
}
