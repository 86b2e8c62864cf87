import { Body, Controller, Get, HttpCode, Param, Post } from '@nestjs/common';
import { parseCreateOrder } from './create-order.input';
import { CreatedOrder, OrdersService, OrderView, PaidOrder } from './orders.service';

@Controller('orders')
export class OrdersController {
  constructor(private readonly orders: OrdersService) {}

  /** 201 with the order, `closeTaskId` and `closesAt`; 400 on bad input. */
  @Post()
  create(@Body() body: unknown): Promise<CreatedOrder> {
    return this.orders.create(parseCreateOrder(body));
  }

  /** 200 with the paid order and `closeTaskCancel`; 404 unknown order; 409 not pending. */
  @Post(':id/pay')
  @HttpCode(200)
  pay(@Param('id') id: string): Promise<PaidOrder> {
    return this.orders.pay(id);
  }

  /** 200 with the order and `closeTask` (state delayed | ready | running | done | unknown ...); 404 unknown. */
  @Get(':id')
  get(@Param('id') id: string): Promise<OrderView> {
    return this.orders.get(id);
  }
}
