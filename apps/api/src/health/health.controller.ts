import { Controller, Get } from '@nestjs/common';

@Controller()
export class HealthController {
  /** Liveness: answers as soon as the process serves HTTP. */
  @Get('health')
  health(): { status: 'ok' } {
    return { status: 'ok' };
  }
}
