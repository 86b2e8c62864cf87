import { Body, Controller, Get, HttpCode, Inject, Param, Post, Query, Req, Res, UnauthorizedException, UseFilters, UseGuards, UseInterceptors, type Type } from '@nestjs/common';
import { randomBytes } from 'crypto';
import { readFileSync } from 'fs';
import { join } from 'path';
import { DashboardApiService, type DeadSelection } from './dashboard-api.service';
import { DashboardFlowsService } from './dashboard-flows.service';
import { DashboardGroupsService } from './dashboard-groups.service';
import { DashboardLimitsService } from './dashboard-limits.service';
import { CSRF_COOKIE, DASHBOARD_OPTIONS, DashboardAuthGuard, SESSION_COOKIE, SignInRoute, sameSecret } from './dashboard-auth.guard';
import { DashboardSessions } from './dashboard-sessions';
import { DashboardErrorFilter, sendJson, type HttpReply } from './dashboard-error.filter';
import { DashboardHeadersInterceptor } from './dashboard-headers.interceptor';
import type { ResolvedDashboardOptions } from './dashboard-options';
import { SECURITY_HEADERS, dashboardPage } from './dashboard-page';
import { cookie, parseCookies } from './http-cookies';

interface HttpRequest {
  headers: Record<string, string | string[] | undefined>;
  socket?: { encrypted?: boolean };
}

/** The files the front end is made of (built at build time into ./assets). */
const ASSETS: Record<string, string> = { 'app.js': 'text/javascript; charset=utf-8', 'app.css': 'text/css; charset=utf-8' };
const assetCache = new Map<string, Buffer>();

function asset(file: string): Buffer {
  let content = assetCache.get(file);
  if (!content) {
    content = readFileSync(join(__dirname, 'assets', file));
    assetCache.set(file, content);
  }
  return content;
}

/** Sends a non-JSON body with the dashboard's headers. */
function send(reply: HttpReply, status: number, contentType: string, body: string | Buffer, headers: Record<string, string | string[]> = {}): void {
  for (const [name, value] of Object.entries({ ...SECURITY_HEADERS, ...headers })) reply.header(name, value);
  reply.status(status).type(contentType).send(body);
}

/**
 * The dashboard's controller, mounted at `path`: the page, its assets, the sign-in route and the admin API
 * (see dashboard-api.ts). Every route goes through `DashboardAuthGuard` and carries the security headers
 * (`DashboardHeadersInterceptor`); errors are JSON.
 */
export function dashboardController(path: string): Type<unknown> {
  @Controller(path)
  @UseGuards(DashboardAuthGuard)
  @UseFilters(DashboardErrorFilter)
  @UseInterceptors(DashboardHeadersInterceptor)
  class DashboardController {
    constructor(
      private readonly api: DashboardApiService,
      private readonly limits: DashboardLimitsService,
      private readonly groups: DashboardGroupsService,
      private readonly flows: DashboardFlowsService,
      @Inject(DASHBOARD_OPTIONS) private readonly options: ResolvedDashboardOptions,
      private readonly sessions: DashboardSessions,
    ) {}

    @Get()
    page(@Req() request: HttpRequest, @Res() reply: HttpReply): void {
      const headers: Record<string, string> = {};
      if (!parseCookies(request.headers.cookie)[CSRF_COOKIE]) headers['set-cookie'] = this.csrfCookie(request);
      send(reply, 200, 'text/html; charset=utf-8', dashboardPage(this.options.path, this.options.title), headers);
    }

    @Get('login')
    @SignInRoute()
    async login(@Query('token') token: unknown, @Req() request: HttpRequest, @Res() reply: HttpReply): Promise<void> {
      const expected = this.options.token;
      if (!expected || typeof token !== 'string' || !sameSecret(token, expected)) throw new UnauthorizedException('wrong or missing token');
      const secure = request.socket?.encrypted ? '; Secure' : '';
      const id = await this.sessions.create();
      const session = cookie(SESSION_COOKIE, id, { path: this.options.path, httpOnly: true, maxAgeS: Math.ceil(this.sessions.ttlMs / 1000) }) + secure;
      send(reply, 303, 'text/plain; charset=utf-8', 'signed in', { location: `${this.options.path}/`, 'set-cookie': [session, this.csrfCookie(request)] });
    }

    /** Ends the browser's session on every instance (a POST: it needs the CSRF header) and clears its cookie. */
    @HttpCode(200)
    @Post('logout')
    async logout(@Req() request: HttpRequest, @Res() reply: HttpReply): Promise<void> {
      await this.sessions.end(parseCookies(request.headers.cookie)[SESSION_COOKIE]);
      const cleared = cookie(SESSION_COOKIE, '', { path: this.options.path, httpOnly: true, maxAgeS: 0 });
      reply.header('set-cookie', cleared);
      sendJson(reply, 200, { signedOut: true });
    }

    @Get('assets/:file')
    asset(@Param('file') file: string, @Res() reply: HttpReply): void {
      const type = Object.prototype.hasOwnProperty.call(ASSETS, file) ? ASSETS[file] : undefined;
      if (!type) {
        sendJson(reply, 404, { error: { name: 'NotFoundException', message: 'no such asset' } });
        return;
      }
      send(reply, 200, type, asset(file), { 'cache-control': 'private, max-age=300' });
    }

    @Get('api/overview')
    overview() {
      return this.api.overview();
    }

    @Get('api/types/:type/tasks')
    tasks(@Param('type') type: string, @Query() query: Record<string, unknown>) {
      return this.api.tasks(type, query);
    }

    @Get('api/types/:type/tasks/:id')
    task(@Param('type') type: string, @Param('id') id: string) {
      return this.api.task(type, id);
    }

    @Get('api/types/:type/tasks/:id/history')
    taskHistory(@Param('type') type: string, @Param('id') id: string) {
      return this.api.taskHistory(type, id);
    }

    @HttpCode(200)
    @Post('api/types/:type/tasks/:id/run-now')
    runNow(@Param('type') type: string, @Param('id') id: string) {
      return this.api.runNow(type, id);
    }

    @HttpCode(200)
    @Post('api/types/:type/tasks/:id/reschedule')
    reschedule(@Param('type') type: string, @Param('id') id: string, @Body() body: unknown) {
      return this.api.reschedule(type, id, body);
    }

    @HttpCode(200)
    @Post('api/types/:type/tasks/:id/cancel')
    cancel(@Param('type') type: string, @Param('id') id: string) {
      return this.api.cancel(type, id);
    }

    @HttpCode(200)
    @Post('api/types/:type/dead/redrive')
    redrive(@Param('type') type: string, @Body() body: DeadSelection) {
      return this.api.redriveDead(type, body);
    }

    @HttpCode(200)
    @Post('api/types/:type/dead/delete')
    deleteDead(@Param('type') type: string, @Body() body: DeadSelection) {
      return this.api.deleteDead(type, body);
    }

    @HttpCode(200)
    @Post('api/types/:type/pause')
    pause(@Param('type') type: string) {
      return this.api.setPaused(type, true);
    }

    @HttpCode(200)
    @Post('api/types/:type/resume')
    resume(@Param('type') type: string) {
      return this.api.setPaused(type, false);
    }

    @Get('api/types/:type/limits')
    typeLimits(@Param('type') type: string) {
      return this.limits.get(type);
    }

    @HttpCode(200)
    @Post('api/types/:type/limits/rate-limit')
    setRateLimit(@Param('type') type: string, @Body() body: unknown) {
      return this.limits.setRateLimit(type, body);
    }

    @HttpCode(200)
    @Post('api/types/:type/limits/global-concurrency')
    setGlobalConcurrency(@Param('type') type: string, @Body() body: unknown) {
      return this.limits.setGlobalConcurrency(type, body);
    }

    @HttpCode(200)
    @Post('api/types/:type/limits/reset')
    resetLimits(@Param('type') type: string) {
      return this.limits.reset(type);
    }

    @Get('api/types/:type/groups')
    typeGroups(@Param('type') type: string, @Query() query: Record<string, unknown>) {
      return this.groups.list(type, query);
    }

    @Get('api/types/:type/groups/:group')
    group(@Param('type') type: string, @Param('group') group: string) {
      return this.groups.get(type, group);
    }

    @HttpCode(200)
    @Post('api/types/:type/groups/:group/pause')
    pauseGroup(@Param('type') type: string, @Param('group') group: string) {
      return this.groups.setPaused(type, group, true);
    }

    @HttpCode(200)
    @Post('api/types/:type/groups/:group/resume')
    resumeGroup(@Param('type') type: string, @Param('group') group: string) {
      return this.groups.setPaused(type, group, false);
    }

    @HttpCode(200)
    @Post('api/types/:type/groups/:group/concurrency')
    setGroupConcurrency(@Param('type') type: string, @Param('group') group: string, @Body() body: unknown) {
      return this.groups.setConcurrency(type, group, body);
    }

    @HttpCode(200)
    @Post('api/types/:type/groups/:group/weight')
    setGroupWeight(@Param('type') type: string, @Param('group') group: string, @Body() body: unknown) {
      return this.groups.setWeight(type, group, body);
    }

    @Get('api/route')
    route() {
      return this.api.route();
    }

    @Get('api/flows')
    listFlows(@Query() query: Record<string, unknown>) {
      return this.flows.list(query);
    }

    @Get('api/flows/:id')
    flow(@Param('id') id: string) {
      return this.flows.get(id);
    }

    @HttpCode(200)
    @Post('api/flows/:id/cancel')
    cancelFlow(@Param('id') id: string) {
      return this.flows.cancel(id);
    }

    /** A fresh CSRF cookie (readable by the page, which echoes it in the x-csrf-token header). */
    private csrfCookie(request: HttpRequest): string {
      const secure = request.socket?.encrypted ? '; Secure' : '';
      return cookie(CSRF_COOKIE, randomBytes(24).toString('hex'), { path: this.options.path, httpOnly: false }) + secure;
    }
  }
  return DashboardController;
}
