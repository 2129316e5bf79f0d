import { Controller, Delete, Get, Headers, HttpCode, Inject, Param, Post, Query, Req, Res } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
// Adds request.parts() and request.isMultipart() to Fastify's request type.
import type {} from '@fastify/multipart';
import { PLATFORM_CONFIG, type PlatformConfig } from '@conveyor/config';
import { FileStore, assertFileId, type StoredFile } from '@conveyor/batch-store';
import { parseExpiresAfter } from '@conveyor/protocol';
import type { FileDeleted, FileObject, ListPage } from '@conveyor/openai';
import { ApiBody, ApiConsumes, ApiHeader, ApiParam, ApiProduces, ApiQuery, ApiResponse } from '@nestjs/swagger';
import { UseAuthScheme } from '../auth/auth-scheme.decorator.js';
import { ApiJsonOk, ApiRoute } from '../docs/api-docs.decorators.js';
import { Caller } from '../auth/caller.decorator.js';
import { OpenAiHttpError } from '../errors/openai-http.error.js';
import { FilesService, toFileObject, type ShownFile } from './files.service.js';

const PURPOSES = ['batch'];
const EXPIRY_FIELD = /^expires_after\[(anchor|seconds)\]$/;

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
  @ApiRoute('Upload a JSONL file (multipart: file, purpose=batch)', { auth: 'Bearer', errors: [400, 401, 413] })
  @ApiConsumes('multipart/form-data')
  @ApiBody({
    schema: {
      type: 'object',
      required: ['file', 'purpose'],
      properties: {
        file: { type: 'string', format: 'binary' },
        purpose: { type: 'string', enum: ['batch'] },
        'expires_after[anchor]': { type: 'string', enum: ['created_at'] },
        'expires_after[seconds]': {
          type: 'integer',
          minimum: 3600,
          maximum: 2_592_000,
          description: 'The file expires (is removed, and answers 404) this long after it was created.',
        },
      },
    },
  })
  @ApiJsonOk('A file')
  @HttpCode(200)
  async upload(@Req() req: FastifyRequest, @Caller() owner: string): Promise<FileObject> {
    if (!req.isMultipart())
      throw OpenAiHttpError.invalidRequest(
        'Upload the file as multipart/form-data with fields "file" and "purpose".',
        'file',
      );
    let purpose: string | undefined;
    let saved: StoredFile | undefined;
    // OpenAI's clients send `expires_after` as the fields expires_after[anchor] and expires_after[seconds].
    const expiresAfter: Record<string, string> = {};
    for await (const part of req.parts()) {
      const expiryField = part.type === 'field' ? EXPIRY_FIELD.exec(part.fieldname)?.[1] : undefined;
      if (part.type === 'field' && part.fieldname === 'purpose') purpose = String(part.value);
      else if (part.type === 'field' && expiryField) expiresAfter[expiryField] = String(part.value);
      else if (part.type === 'file' && part.fieldname === 'file' && !saved) {
        // Streamed to the store as it arrives: a 200 MB upload is never held in memory.
        saved = await this.store.save(
          { filename: part.filename, purpose: purpose ?? 'batch', owner },
          part.file,
          this.config.batch.maxFileBytes,
        );
      } else if (part.type === 'file') part.file.resume();
    }
    if (!saved) throw OpenAiHttpError.invalidRequest('Missing the "file" field.', 'file');
    if (!purpose || !PURPOSES.includes(purpose)) {
      await this.store.delete(saved.id);
      throw OpenAiHttpError.invalidRequest(`purpose must be one of: ${PURPOSES.join(', ')}.`, 'purpose');
    }
    let shown: ShownFile = { ...saved, purpose, expiresAt: null };
    if (Object.keys(expiresAfter).length) {
      const expiry = parseExpiresAfter(expiresAfter, 'expires_after', this.config.batch.outputExpiryMinSeconds);
      if (!expiry.ok) {
        await this.store.delete(saved.id);
        throw OpenAiHttpError.invalidRequest(expiry.message, 'expires_after');
      }
      shown = { ...(await this.files.expire(saved, expiry.seconds)), purpose };
    }
    return toFileObject(shown);
  }

  @Get()
  @ApiRoute('Files of this key', { auth: 'Bearer', errors: [401] })
  @ApiQuery({ name: 'purpose', required: false })
  @ApiJsonOk('A list of files')
  async list(@Caller() owner: string, @Query('purpose') purpose?: string): Promise<ListPage<FileObject>> {
    const data = await this.files.list(owner, purpose);
    return { object: 'list', data, first_id: data[0]?.id ?? null, last_id: data.at(-1)?.id ?? null, has_more: false };
  }

  @Get(':id')
  @ApiRoute('A file', { auth: 'Bearer', errors: [400, 401, 404] })
  @ApiParam({ name: 'id', description: 'file-…' })
  @ApiJsonOk('A file')
  async get(@Param('id') id: string, @Caller() owner: string): Promise<FileObject> {
    return toFileObject(await this.files.get(owner, assertFileId(id)));
  }

  @Get(':id/content')
  @ApiRoute("A file's content (a batch's output grows while it runs)", {
    auth: 'Bearer',
    errors: [400, 401, 404, 416],
  })
  @ApiParam({ name: 'id', description: 'file-…' })
  @ApiHeader({
    name: 'Range',
    required: false,
    description: 'One range of bytes: `bytes=<first>-<last>`, `bytes=<first>-` or `bytes=-<length>`',
  })
  @ApiProduces('application/jsonl')
  @ApiResponse({ status: 200, description: 'The whole content as it is now' })
  @ApiResponse({ status: 206, description: 'The bytes the Range header names, with Content-Range' })
  // The reply is sent here: its status (200 or 206) depends on the request, which a route's fixed code cannot say.
  async content(
    @Param('id') id: string,
    @Caller() owner: string,
    @Headers('range') range: string | undefined,
    @Res() reply: FastifyReply,
  ): Promise<void> {
    const content = await this.files.content(owner, assertFileId(id), range);
    void reply.header('Accept-Ranges', 'bytes').type('application/jsonl');
    if (content.range) {
      const { start, end, size } = content.range;
      void reply
        .code(206)
        .header('Content-Range', `bytes ${start}-${end}/${size}`)
        .header('Content-Length', end - start + 1);
    }
    void reply.send(content.stream);
  }

  @Delete(':id')
  @ApiRoute('Delete a file', { auth: 'Bearer', errors: [400, 401, 404] })
  @ApiParam({ name: 'id', description: 'file-…' })
  @ApiJsonOk('The deleted file')
  @HttpCode(200)
  async delete(@Param('id') id: string, @Caller() owner: string): Promise<FileDeleted> {
    await this.files.delete(owner, assertFileId(id));
    return { id, object: 'file', deleted: true };
  }
}
