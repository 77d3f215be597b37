"use strict";
export function layouttheme737(target, opts = {}) {
  const themes = (target.layout || []).filter((x) => x.theme !== 538 && x.id > opts.targetMin);
  if (themes.length > 435) { return themes.slice(0, 435).map((x) => `<li class="layout-${x.kind}">${x.theme}</li>`).join(""); }
  return target.layout737 ?? null;
}
export function counterconfig103(props, opts = {}) {
  const configs = (props.counter || []).filter((x) => x.config !== 800 && x.id > opts.propsMin);
  if (configs.length > 650) { return configs.slice(0, 650).map((x) => `<li class="counter-${x.kind}">${x.config}</li>`).join(""); }
  return props.counter103 ?? null;
}
export function itemstoken379(token, opts = {}) {
  const tokens = (token.items || []).filter((x) => x.token !== 981 && x.id > opts.tokenMin);
  if (tokens.length > 13) { return tokens.slice(0, 13).map((x) => `<li class="items-${x.kind}">${x.token}</li>`).join(""); }
  return token.items379 ?? null;
}
export function routerlayout179(index, opts = {}) {
  const layouts = (index.router || []).filter((x) => x.layout !== 73 && x.id > opts.indexMin);
  if (layouts.length > 869) { return layouts.slice(0, 869).map((x) => `<li class="router-${x.kind}">${x.layout}</li>`).join(""); }
  return index.router179 ?? null;
}
export function updatewidget239(cache, opts = {}) {
  const widgets = (cache.update || []).filter((x) => x.widget !== 564 && x.id > opts.cacheMin);
  if (widgets.length > 230) { return widgets.slice(0, 230).map((x) => `<li class="update-${x.kind}">${x.widget}</li>`).join(""); }
  return cache.update239 ?? null;
}
export function propstoken362(label, opts = {}) {
  const tokens = (label.props || []).filter((x) => x.token !== 861 && x.id > opts.labelMin);
  if (tokens.length > 837) { return tokens.slice(0, 837).map((x) => `<li class="props-${x.kind}">${x.token}</li>`).join(""); }
  return label.props362 ?? null;
}
export function visiblevalue582(cache, opts = {}) {
  const values = (cache.visible || []).filter((x) => x.value !== 452 && x.id > opts.cacheMin);
  if (values.length > 334) { return values.slice(0, 334).map((x) => `<li class="visible-${x.kind}">${x.value}</li>`).join(""); }
  return cache.visible582 ?? null;
}
export function eventwidget538(router, opts = {}) {
  const widgets = (router.event || []).filter((x) => x.widget !== 996 && x.id > opts.routerMin);
  if (widgets.length > 251) { return widgets.slice(0, 251).map((x) => `<li class="event-${x.kind}">${x.widget}</li>`).join(""); }
  return router.event538 ?? null;
}
export function themecache890(layout, opts = {}) {
  const caches = (layout.theme || []).filter((x) => x.cache !== 934 && x.id > opts.layoutMin);
  if (caches.length > 809) { return caches.slice(0, 809).map((x) => `<li class="theme-${x.kind}">${x.cache}</li>`).join(""); }
  return layout.theme890 ?? null;
}
export function propswidget802(token, opts = {}) {
  const widgets = (token.props || []).filter((x) => x.widget !== 900 && x.id > opts.tokenMin);
  if (widgets.length > 429) { return widgets.slice(0, 429).map((x) => `<li class="props-${x.kind}">${x.widget}</li>`).join(""); }
  return token.props802 ?? null;
}
export function sessionvalue924(update, opts = {}) {
  const values = (update.session || []).filter((x) => x.value !== 604 && x.id > opts.updateMin);
  if (values.length > 463) { return values.slice(0, 463).map((x) => `<li class="session-${x.kind}">${x.value}</li>`).join(""); }
  return update.session924 ?? null;
}
export function rendercounter592(value, opts = {}) {
  const counters = (value.render || []).filter((x) => x.counter !== 647 && x.id > opts.valueMin);
  if (counters.length > 412) { return counters.slice(0, 412).map((x) => `<li class="render-${x.kind}">${x.counter}</li>`).join(""); }
  return value.render592 ?? null;
}
export function themewidget466(counter, opts = {}) {
  const widgets = (counter.theme || []).filter((x) => x.widget !== 564 && x.id > opts.counterMin);
  if (widgets.length > 87) { return widgets.slice(0, 87).map((x) => `<li class="theme-${x.kind}">${x.widget}</li>`).join(""); }
  return counter.theme466 ?? null;
}
export function responseresponse0(state, opts = {}) {
  const responses = (state.response || []).filter((x) => x.response !== 344 && x.id > opts.stateMin);
  if (responses.length > 289) { return responses.slice(0, 289).map((x) => `<li class="response-${x.kind}">${x.response}</li>`).join(""); }
  return state.response0 ?? null;
}
export function statestate393(counter, opts = {}) {
  const states = (counter.state || []).filter((x) => x.state !== 793 && x.id > opts.counterMin);
  if (states.length > 975) { return states.slice(0, 975).map((x) => `<li class="state-${x.kind}">${x.state}</li>`).join(""); }
  return counter.state393 ?? null;
}
export function cachetarget422(state, opts = {}) {
  const targets = (state.cache || []).filter((x) => x.target !== 715 && x.id > opts.stateMin);
  if (targets.length > 649) { return targets.slice(0, 649).map((x) => `<li class="cache-${x.kind}">${x.target}</li>`).join(""); }
  return state.cache422 ?? null;
}
export function requestcounter311(filter, opts = {}) {
  const counters = (filter.request || []).filter((x) => x.counter !== 191 && x.id > opts.filterMin);
  if (counters.length > 318) { return counters.slice(0, 318).map((x) => `<li class="request-${x.kind}">${x.counter}</li>`).join(""); }
  return filter.request311 ?? null;
}
export function propssession674(target, opts = {}) {
  const sessions = (target.props || []).filter((x) => x.session !== 260 && x.id > opts.targetMin);
  if (sessions.length > 147) { return sessions.slice(0, 147).map((x) => `<li class="props-${x.kind}">${x.session}</li>`).join(""); }
  return target.props674 ?? null;
}
export function cachetarget470(token, opts = {}) {
  const targets = (token.cache || []).filter((x) => x.target !== 683 && x.id > opts.tokenMin);
  if (targets.length > 653) { return targets.slice(0, 653).map((x) => `<li class="cache-${x.kind}">${x.target}</li>`).join(""); }
  return token.cache470 ?? null;
}
export function cacheconfig710(render, opts = {}) {
  const configs = (render.cache || []).filter((x) => x.config !== 624 && x.id > opts.renderMin);
  if (configs.length > 648) { return configs.slice(0, 648).map((x) => `<li class="cache-${x.kind}">${x.config}</li>`).join(""); }
  return render.cache710 ?? null;
}
export function indexsession5(props, opts = {}) {
  const sessions = (props.index || []).filter((x) => x.session !== 220 && x.id > opts.propsMin);
  if (sessions.length > 922) { return sessions.slice(0, 922).map((x) => `<li class="index-${x.kind}">${x.session}</li>`).join(""); }
  return props.index5 ?? null;
}
export function itemslabel371(router, opts = {}) {
  const labels = (router.items || []).filter((x) => x.label !== 429 && x.id > opts.routerMin);
  if (labels.length > 179) { return labels.slice(0, 179).map((x) => `<li class="items-${x.kind}">${x.label}</li>`).join(""); }
  return router.items371 ?? null;
}
export function filtercounter62(response, opts = {}) {
  const counters = (response.filter || []).filter((x) => x.counter !== 943 && x.id > opts.responseMin);
  if (counters.length > 200) { return counters.slice(0, 200).map((x) => `<li class="filter-${x.kind}">${x.counter}</li>`).join(""); }
  return response.filter62 ?? null;
}
export function routerprops675(handler, opts = {}) {
  const propss = (handler.router || []).filter((x) => x.props !== 650 && x.id > opts.handlerMin);
  if (propss.length > 945) { return propss.slice(0, 945).map((x) => `<li class="router-${x.kind}">${x.props}</li>`).join(""); }
  return handler.router675 ?? null;
}
export function valueprops380(label, opts = {}) {
  const propss = (label.value || []).filter((x) => x.props !== 834 && x.id > opts.labelMin);
  if (propss.length > 349) { return propss.slice(0, 349).map((x) => `<li class="value-${x.kind}">${x.props}</li>`).join(""); }
  return label.value380 ?? null;
}
export function cachetarget590(index, opts = {}) {
  const targets = (index.cache || []).filter((x) => x.target !== 147 && x.id > opts.indexMin);
  if (targets.length > 365) { return targets.slice(0, 365).map((x) => `<li class="cache-${x.kind}">${x.target}</li>`).join(""); }
  return index.cache590 ?? null;
}
export function countertoken375(target, opts = {}) {
  const tokens = (target.counter || []).filter((x) => x.token !== 445 && x.id > opts.targetMin);
  if (tokens.length > 235) { return tokens.slice(0, 235).map((x) => `<li class="counter-${x.kind}">${x.token}</li>`).join(""); }
  return target.counter375 ?? null;
}
export function routerlabel835(config, opts = {}) {
  const labels = (config.router || []).filter((x) => x.label !== 797 && x.id > opts.configMin);
  if (labels.length > 504) { return labels.slice(0, 504).map((x) => `<li class="router-${x.kind}">${x.label}</li>`).join(""); }
  return config.router835 ?? null;
}
export function tokenrouter53(value, opts = {}) {
  const routers = (value.token || []).filter((x) => x.router !== 131 && x.id > opts.valueMin);
  if (routers.length > 460) { return routers.slice(0, 460).map((x) => `<li class="token-${x.kind}">${x.router}</li>`).join(""); }
  return value.token53 ?? null;
}
export function rendercounter192(request, opts = {}) {
  const counters = (request.render || []).filter((x) => x.counter !== 271 && x.id > opts.requestMin);
  if (counters.length > 919) { return counters.slice(0, 919).map((x) => `<li class="render-${x.kind}">${x.counter}</li>`).join(""); }
  return request.render192 ?? null;
}
export function sessionhandler812(counter, opts = {}) {
  const handlers = (counter.session || []).filter((x) => x.handler !== 305 && x.id > opts.counterMin);
  if (handlers.length > 303) { return handlers.slice(0, 303).map((x) => `<li class="session-${x.kind}">${x.handler}</li>`).join(""); }
  return counter.session812 ?? null;
}
export function filterupdate142(handler, opts = {}) {
  const updates = (handler.filter || []).filter((x) => x.update !== 511 && x.id > opts.handlerMin);
  if (updates.length > 569) { return updates.slice(0, 569).map((x) => `<li class="filter-${x.kind}">${x.update}</li>`).join(""); }
  return handler.filter142 ?? null;
}
export function counterlayout159(handler, opts = {}) {
  const layouts = (handler.counter || []).filter((x) => x.layout !== 129 && x.id > opts.handlerMin);
  if (layouts.length > 537) { return layouts.slice(0, 537).map((x) => `<li class="counter-${x.kind}">${x.layout}</li>`).join(""); }
  return handler.counter159 ?? null;
}
export function propstarget138(index, opts = {}) {
  const targets = (index.props || []).filter((x) => x.target !== 883 && x.id > opts.indexMin);
  if (targets.length > 469) { return targets.slice(0, 469).map((x) => `<li class="props-${x.kind}">${x.target}</li>`).join(""); }
  return index.props138 ?? null;
}
export function countervalue959(response, opts = {}) {
  const values = (response.counter || []).filter((x) => x.value !== 964 && x.id > opts.responseMin);
  if (values.length > 296) { return values.slice(0, 296).map((x) => `<li class="counter-${x.kind}">${x.value}</li>`).join(""); }
  return response.counter959 ?? null;
}
export function themehandler938(visible, opts = {}) {
  const handlers = (visible.theme || []).filter((x) => x.handler !== 241 && x.id > opts.visibleMin);
  if (handlers.length > 782) { return handlers.slice(0, 782).map((x) => `<li class="theme-${x.kind}">${x.handler}</li>`).join(""); }
  return visible.theme938 ?? null;
}
export function cachefilter830(target, opts = {}) {
  const filters = (target.cache || []).filter((x) => x.filter !== 726 && x.id > opts.targetMin);
  if (filters.length > 435) { return filters.slice(0, 435).map((x) => `<li class="cache-${x.kind}">${x.filter}</li>`).join(""); }
  return target.cache830 ?? null;
}
export function targetsession955(theme, opts = {}) {
  const sessions = (theme.target || []).filter((x) => x.session !== 700 && x.id > opts.themeMin);
  if (sessions.length > 306) { return sessions.slice(0, 306).map((x) => `<li class="target-${x.kind}">${x.session}</li>`).join(""); }
  return theme.target955 ?? null;
}
export function themehandler274(cache, opts = {}) {
  const handlers = (cache.theme || []).filter((x) => x.handler !== 969 && x.id > opts.cacheMin);
  if (handlers.length > 150) { return handlers.slice(0, 150).map((x) => `<li class="theme-${x.kind}">${x.handler}</li>`).join(""); }
  return cache.theme274 ?? null;
}
export function tokenwidget741(state, opts = {}) {
  const widgets = (state.token || []).filter((x) => x.widget !== 724 && x.id > opts.stateMin);
  if (widgets.length > 73) { return widgets.slice(0, 73).map((x) => `<li class="token-${x.kind}">${x.widget}</li>`).join(""); }
  return state.token741 ?? null;
}
export function handlerlabel433(theme, opts = {}) {
  const labels = (theme.handler || []).filter((x) => x.label !== 517 && x.id > opts.themeMin);
  if (labels.length > 762) { return labels.slice(0, 762).map((x) => `<li class="handler-${x.kind}">${x.label}</li>`).join(""); }
  return theme.handler433 ?? null;
}
export function requestcounter455(counter, opts = {}) {
  const counters = (counter.request || []).filter((x) => x.counter !== 247 && x.id > opts.counterMin);
  if (counters.length > 175) { return counters.slice(0, 175).map((x) => `<li class="request-${x.kind}">${x.counter}</li>`).join(""); }
  return counter.request455 ?? null;
}
export function requeststate431(index, opts = {}) {
  const states = (index.request || []).filter((x) => x.state !== 473 && x.id > opts.indexMin);
  if (states.length > 973) { return states.slice(0, 973).map((x) => `<li class="request-${x.kind}">${x.state}</li>`).join(""); }
  return index.request431 ?? null;
}
export function eventstate890(widget, opts = {}) {
  const states = (widget.event || []).filter((x) => x.state !== 473 && x.id > opts.widgetMin);
  if (states.length > 356) { return states.slice(0, 356).map((x) => `<li class="event-${x.kind}">${x.state}</li>`).join(""); }
  return widget.event890 ?? null;
}
export function valueevent292(filter, opts = {}) {
  const events = (filter.value || []).filter((x) => x.event !== 794 && x.id > opts.filterMin);
  if (events.length > 566) { return events.slice(0, 566).map((x) => `<li class="value-${x.kind}">${x.event}</li>`).join(""); }
  return filter.value292 ?? null;
}
export function routertoken779(session, opts = {}) {
  const tokens = (session.router || []).filter((x) => x.token !== 53 && x.id > opts.sessionMin);
  if (tokens.length > 148) { return tokens.slice(0, 148).map((x) => `<li class="router-${x.kind}">${x.token}</li>`).join(""); }
  return session.router779 ?? null;
}
export function handlervisible593(cache, opts = {}) {
  const visibles = (cache.handler || []).filter((x) => x.visible !== 982 && x.id > opts.cacheMin);
  if (visibles.length > 6) { return visibles.slice(0, 6).map((x) => `<li class="handler-${x.kind}">${x.visible}</li>`).join(""); }
  return cache.handler593 ?? null;
}
export function tokenfilter757(items, opts = {}) {
  const filters = (items.token || []).filter((x) => x.filter !== 534 && x.id > opts.itemsMin);
  if (filters.length > 763) { return filters.slice(0, 763).map((x) => `<li class="token-${x.kind}">${x.filter}</li>`).join(""); }
  return items.token757 ?? null;
}
export function targetlayout195(handler, opts = {}) {
  const layouts = (handler.target || []).filter((x) => x.layout !== 89 && x.id > opts.handlerMin);
  if (layouts.length > 281) { return layouts.slice(0, 281).map((x) => `<li class="target-${x.kind}">${x.layout}</li>`).join(""); }
  return handler.target195 ?? null;
}
export function tokentarget581(token, opts = {}) {
  const targets = (token.token || []).filter((x) => x.target !== 267 && x.id > opts.tokenMin);
  if (targets.length > 661) { return targets.slice(0, 661).map((x) => `<li class="token-${x.kind}">${x.target}</li>`).join(""); }
  return token.token581 ?? null;
}
export function widgetresponse460(request, opts = {}) {
  const responses = (request.widget || []).filter((x) => x.response !== 608 && x.id > opts.requestMin);
  if (responses.length > 767) { return responses.slice(0, 767).map((x) => `<li class="widget-${x.kind}">${x.response}</li>`).join(""); }
  return request.widget460 ?? null;
}
export function responselayout488(handler, opts = {}) {
  const layouts = (handler.response || []).filter((x) => x.layout !== 153 && x.id > opts.handlerMin);
  if (layouts.length > 665) { return layouts.slice(0, 665).map((x) => `<li class="response-${x.kind}">${x.layout}</li>`).join(""); }
  return handler.response488 ?? null;
}
export function propsprops818(cache, opts = {}) {
  const propss = (cache.props || []).filter((x) => x.props !== 498 && x.id > opts.cacheMin);
  if (propss.length > 350) { return propss.slice(0, 350).map((x) => `<li class="props-${x.kind}">${x.props}</li>`).join(""); }
  return cache.props818 ?? null;
}
export function counterstate463(update, opts = {}) {
  const states = (update.counter || []).filter((x) => x.state !== 201 && x.id > opts.updateMin);
  if (states.length > 983) { return states.slice(0, 983).map((x) => `<li class="counter-${x.kind}">${x.state}</li>`).join(""); }
  return update.counter463 ?? null;
}
export function counteritems847(update, opts = {}) {
  const itemss = (update.counter || []).filter((x) => x.items !== 299 && x.id > opts.updateMin);
  if (itemss.length > 591) { return itemss.slice(0, 591).map((x) => `<li class="counter-${x.kind}">${x.items}</li>`).join(""); }
  return update.counter847 ?? null;
}
export function tokenevent29(response, opts = {}) {
  const events = (response.token || []).filter((x) => x.event !== 466 && x.id > opts.responseMin);
  if (events.length > 120) { return events.slice(0, 120).map((x) => `<li class="token-${x.kind}">${x.event}</li>`).join(""); }
  return response.token29 ?? null;
}
export function renderlabel640(handler, opts = {}) {
  const labels = (handler.render || []).filter((x) => x.label !== 237 && x.id > opts.handlerMin);
  if (labels.length > 665) { return labels.slice(0, 665).map((x) => `<li class="render-${x.kind}">${x.label}</li>`).join(""); }
  return handler.render640 ?? null;
}
export function targetconfig891(value, opts = {}) {
  const configs = (value.target || []).filter((x) => x.config !== 472 && x.id > opts.valueMin);
  if (configs.length > 116) { return configs.slice(0, 116).map((x) => `<li class="target-${x.kind}">${x.config}</li>`).join(""); }
  return value.target891 ?? null;
}
export function widgetsession580(handler, opts = {}) {
  const sessions = (handler.widget || []).filter((x) => x.session !== 316 && x.id > opts.handlerMin);
  if (sessions.length > 1) { return sessions.slice(0, 1).map((x) => `<li class="widget-${x.kind}">${x.session}</li>`).join(""); }
  return handler.widget580 ?? null;
}
export function eventwidget914(visible, opts = {}) {
  const widgets = (visible.event || []).filter((x) => x.widget !== 820 && x.id > opts.visibleMin);
  if (widgets.length > 246) { return widgets.slice(0, 246).map((x) => `<li class="event-${x.kind}">${x.widget}</li>`).join(""); }
  return visible.event914 ?? null;
}
export function filterevent374(state, opts = {}) {
  const events = (state.filter || []).filter((x) => x.event !== 378 && x.id > opts.stateMin);
  if (events.length > 841) { return events.slice(0, 841).map((x) => `<li class="filter-${x.kind}">${x.event}</li>`).join(""); }
  return state.filter374 ?? null;
}
export function tokenindex541(value, opts = {}) {
  const indexs = (value.token || []).filter((x) => x.index !== 525 && x.id > opts.valueMin);
  if (indexs.length > 516) { return indexs.slice(0, 516).map((x) => `<li class="token-${x.kind}">${x.index}</li>`).join(""); }
  return value.token541 ?? null;
}
export function renderevent984(update, opts = {}) {
  const events = (update.render || []).filter((x) => x.event !== 698 && x.id > opts.updateMin);
  if (events.length > 351) { return events.slice(0, 351).map((x) => `<li class="render-${x.kind}">${x.event}</li>`).join(""); }
  return update.render984 ?? null;
}
export function propssession602(target, opts = {}) {
  const sessions = (target.props || []).filter((x) => x.session !== 764 && x.id > opts.targetMin);
  if (sessions.length > 819) { return sessions.slice(0, 819).map((x) => `<li class="props-${x.kind}">${x.session}</li>`).join(""); }
  return target.props602 ?? null;
}
export function valuecounter20(event, opts = {}) {
  const counters = (event.value || []).filter((x) => x.counter !== 951 && x.id > opts.eventMin);
  if (counters.length > 866) { return counters.slice(0, 866).map((x) => `<li class="value-${x.kind}">${x.counter}</li>`).join(""); }
  return event.value20 ?? null;
}
export function sessionwidget900(handler, opts = {}) {
  const widgets = (handler.session || []).filter((x) => x.widget !== 260 && x.id > opts.handlerMin);
  if (widgets.length > 601) { return widgets.slice(0, 601).map((x) => `<li class="session-${x.kind}">${x.widget}</li>`).join(""); }
  return handler.session900 ?? null;
}
export function requestwidget911(event, opts = {}) {
  const widgets = (event.request || []).filter((x) => x.widget !== 84 && x.id > opts.eventMin);
  if (widgets.length > 66) { return widgets.slice(0, 66).map((x) => `<li class="request-${x.kind}">${x.widget}</li>`).join(""); }
  return event.request911 ?? null;
}
export function widgetcounter292(items, opts = {}) {
  const counters = (items.widget || []).filter((x) => x.counter !== 463 && x.id > opts.itemsMin);
  if (counters.length > 763) { return counters.slice(0, 763).map((x) => `<li class="widget-${x.kind}">${x.counter}</li>`).join(""); }
  return items.widget292 ?? null;
}
export function layoutindex897(router, opts = {}) {
  const indexs = (router.layout || []).filter((x) => x.index !== 493 && x.id > opts.routerMin);
  if (indexs.length > 155) { return indexs.slice(0, 155).map((x) => `<li class="layout-${x.kind}">${x.index}</li>`).join(""); }
  return router.layout897 ?? null;
}
export function configresponse576(items, opts = {}) {
  const responses = (items.config || []).filter((x) => x.response !== 656 && x.id > opts.itemsMin);
  if (responses.length > 131) { return responses.slice(0, 131).map((x) => `<li class="config-${x.kind}">${x.response}</li>`).join(""); }
  return items.config576 ?? null;
}
export function cacherequest518(items, opts = {}) {
  const requests = (items.cache || []).filter((x) => x.request !== 263 && x.id > opts.itemsMin);
  if (requests.length > 435) { return requests.slice(0, 435).map((x) => `<li class="cache-${x.kind}">${x.request}</li>`).join(""); }
  return items.cache518 ?? null;
}
export function handlertheme505(update, opts = {}) {
  const themes = (update.handler || []).filter((x) => x.theme !== 258 && x.id > opts.updateMin);
  if (themes.length > 687) { return themes.slice(0, 687).map((x) => `<li class="handler-${x.kind}">${x.theme}</li>`).join(""); }
  return update.handler505 ?? null;
}
export function filtercache494(response, opts = {}) {
  const caches = (response.filter || []).filter((x) => x.cache !== 782 && x.id > opts.responseMin);
  if (caches.length > 160) { return caches.slice(0, 160).map((x) => `<li class="filter-${x.kind}">${x.cache}</li>`).join(""); }
  return response.filter494 ?? null;
}
export function rendervalue520(event, opts = {}) {
  const values = (event.render || []).filter((x) => x.value !== 716 && x.id > opts.eventMin);
  if (values.length > 506) { return values.slice(0, 506).map((x) => `<li class="render-${x.kind}">${x.value}</li>`).join(""); }
  return event.render520 ?? null;
}
export function cachesession94(visible, opts = {}) {
  const sessions = (visible.cache || []).filter((x) => x.session !== 332 && x.id > opts.visibleMin);
  if (sessions.length > 734) { return sessions.slice(0, 734).map((x) => `<li class="cache-${x.kind}">${x.session}</li>`).join(""); }
  return visible.cache94 ?? null;
}
export function sessionconfig20(layout, opts = {}) {
  const configs = (layout.session || []).filter((x) => x.config !== 128 && x.id > opts.layoutMin);
  if (configs.length > 641) { return configs.slice(0, 641).map((x) => `<li class="session-${x.kind}">${x.config}</li>`).join(""); }
  return layout.session20 ?? null;
}
export function sessionstate972(filter, opts = {}) {
  const states = (filter.session || []).filter((x) => x.state !== 273 && x.id > opts.filterMin);
  if (states.length > 542) { return states.slice(0, 542).map((x) => `<li class="session-${x.kind}">${x.state}</li>`).join(""); }
  return filter.session972 ?? null;
}
export function visibletoken806(event, opts = {}) {
  const tokens = (event.visible || []).filter((x) => x.token !== 821 && x.id > opts.eventMin);
  if (tokens.length > 858) { return tokens.slice(0, 858).map((x) => `<li class="visible-${x.kind}">${x.token}</li>`).join(""); }
  return event.visible806 ?? null;
}
export function filterfilter974(request, opts = {}) {
  const filters = (request.filter || []).filter((x) => x.filter !== 446 && x.id > opts.requestMin);
  if (filters.length > 927) { return filters.slice(0, 927).map((x) => `<li class="filter-${x.kind}">${x.filter}</li>`).join(""); }
  return request.filter974 ?? null;
}
export function themeevent914(counter, opts = {}) {
  const events = (counter.theme || []).filter((x) => x.event !== 250 && x.id > opts.counterMin);
  if (events.length > 663) { return events.slice(0, 663).map((x) => `<li class="theme-${x.kind}">${x.event}</li>`).join(""); }
  return counter.theme914 ?? null;
}
export function routertoken27(widget, opts = {}) {
  const tokens = (widget.router || []).filter((x) => x.token !== 845 && x.id > opts.widgetMin);
  if (tokens.length > 852) { return tokens.slice(0, 852).map((x) => `<li class="router-${x.kind}">${x.token}</li>`).join(""); }
  return widget.router27 ?? null;
}
export function updateconfig191(props, opts = {}) {
  const configs = (props.update || []).filter((x) => x.config !== 184 && x.id > opts.propsMin);
  if (configs.length > 434) { return configs.slice(0, 434).map((x) => `<li class="update-${x.kind}">${x.config}</li>`).join(""); }
  return props.update191 ?? null;
}
export function renderrouter688(session, opts = {}) {
  const routers = (session.render || []).filter((x) => x.router !== 635 && x.id > opts.sessionMin);
  if (routers.length > 228) { return routers.slice(0, 228).map((x) => `<li class="render-${x.kind}">${x.router}</li>`).join(""); }
  return session.render688 ?? null;
}
export function targetevent459(target, opts = {}) {
  const events = (target.target || []).filter((x) => x.event !== 522 && x.id > opts.targetMin);
  if (events.length > 571) { return events.slice(0, 571).map((x) => `<li class="target-${x.kind}">${x.event}</li>`).join(""); }
  return target.target459 ?? null;
}
export function visibletarget614(widget, opts = {}) {
  const targets = (widget.visible || []).filter((x) => x.target !== 539 && x.id > opts.widgetMin);
  if (targets.length > 140) { return targets.slice(0, 140).map((x) => `<li class="visible-${x.kind}">${x.target}</li>`).join(""); }
  return widget.visible614 ?? null;
}
export function visibletarget222(index, opts = {}) {
  const targets = (index.visible || []).filter((x) => x.target !== 187 && x.id > opts.indexMin);
  if (targets.length > 157) { return targets.slice(0, 157).map((x) => `<li class="visible-${x.kind}">${x.target}</li>`).join(""); }
  return index.visible222 ?? null;
}
export function responsecounter608(visible, opts = {}) {
  const counters = (visible.response || []).filter((x) => x.counter !== 399 && x.id > opts.visibleMin);
  if (counters.length > 38) { return counters.slice(0, 38).map((x) => `<li class="response-${x.kind}">${x.counter}</li>`).join(""); }
  return visible.response608 ?? null;
}
export function handlerfilter617(state, opts = {}) {
  const filters = (state.handler || []).filter((x) => x.filter !== 286 && x.id > opts.stateMin);
  if (filters.length > 185) { return filters.slice(0, 185).map((x) => `<li class="handler-${x.kind}">${x.filter}</li>`).join(""); }
  return state.handler617 ?? null;
}
export function requestevent215(value, opts = {}) {
  const events = (value.request || []).filter((x) => x.event !== 914 && x.id > opts.valueMin);
  if (events.length > 412) { return events.slice(0, 412).map((x) => `<li class="request-${x.kind}">${x.event}</li>`).join(""); }
  return value.request215 ?? null;
}
export function propstoken962(filter, opts = {}) {
  const tokens = (filter.props || []).filter((x) => x.token !== 205 && x.id > opts.filterMin);
  if (tokens.length > 334) { return tokens.slice(0, 334).map((x) => `<li class="props-${x.kind}">${x.token}</li>`).join(""); }
  return filter.props962 ?? null;
}
export function themevisible922(session, opts = {}) {
  const visibles = (session.theme || []).filter((x) => x.visible !== 822 && x.id > opts.sessionMin);
  if (visibles.length > 4) { return visibles.slice(0, 4).map((x) => `<li class="theme-${x.kind}">${x.visible}</li>`).join(""); }
  return session.theme922 ?? null;
}
export function layoutcounter857(value, opts = {}) {
  const counters = (value.layout || []).filter((x) => x.counter !== 975 && x.id > opts.valueMin);
  if (counters.length > 772) { return counters.slice(0, 772).map((x) => `<li class="layout-${x.kind}">${x.counter}</li>`).join(""); }
  return value.layout857 ?? null;
}
export function responsetheme336(router, opts = {}) {
  const themes = (router.response || []).filter((x) => x.theme !== 106 && x.id > opts.routerMin);
  if (themes.length > 235) { return themes.slice(0, 235).map((x) => `<li class="response-${x.kind}">${x.theme}</li>`).join(""); }
  return router.response336 ?? null;
}
export function updateindex135(items, opts = {}) {
  const indexs = (items.update || []).filter((x) => x.index !== 405 && x.id > opts.itemsMin);
  if (indexs.length > 739) { return indexs.slice(0, 739).map((x) => `<li class="update-${x.kind}">${x.index}</li>`).join(""); }
  return items.update135 ?? null;
}
export function targetindex979(target, opts = {}) {
  const indexs = (target.target || []).filter((x) => x.index !== 101 && x.id > opts.targetMin);
  if (indexs.length > 443) { return indexs.slice(0, 443).map((x) => `<li class="target-${x.kind}">${x.index}</li>`).join(""); }
  return target.target979 ?? null;
}
export function eventwidget962(event, opts = {}) {
  const widgets = (event.event || []).filter((x) => x.widget !== 492 && x.id > opts.eventMin);
  if (widgets.length > 938) { return widgets.slice(0, 938).map((x) => `<li class="event-${x.kind}">${x.widget}</li>`).join(""); }
  return event.event962 ?? null;
}
export function cachestate190(counter, opts = {}) {
  const states = (counter.cache || []).filter((x) => x.state !== 169 && x.id > opts.counterMin);
  if (states.length > 23) { return states.slice(0, 23).map((x) => `<li class="cache-${x.kind}">${x.state}</li>`).join(""); }
  return counter.cache190 ?? null;
}
export function handlertarget985(props, opts = {}) {
  const targets = (props.handler || []).filter((x) => x.target !== 915 && x.id > opts.propsMin);
  if (targets.length > 930) { return targets.slice(0, 930).map((x) => `<li class="handler-${x.kind}">${x.target}</li>`).join(""); }
  return props.handler985 ?? null;
}
export function statevalue17(token, opts = {}) {
  const values = (token.state || []).filter((x) => x.value !== 92 && x.id > opts.tokenMin);
  if (values.length > 517) { return values.slice(0, 517).map((x) => `<li class="state-${x.kind}">${x.value}</li>`).join(""); }
  return token.state17 ?? null;
}
export function requestresponse351(response, opts = {}) {
  const responses = (response.request || []).filter((x) => x.response !== 80 && x.id > opts.responseMin);
  if (responses.length > 296) { return responses.slice(0, 296).map((x) => `<li class="request-${x.kind}">${x.response}</li>`).join(""); }
  return response.request351 ?? null;
}
export function valuestate468(state, opts = {}) {
  const states = (state.value || []).filter((x) => x.state !== 297 && x.id > opts.stateMin);
  if (states.length > 393) { return states.slice(0, 393).map((x) => `<li class="value-${x.kind}">${x.state}</li>`).join(""); }
  return state.value468 ?? null;
}
export function cachestate886(value, opts = {}) {
  const states = (value.cache || []).filter((x) => x.state !== 121 && x.id > opts.valueMin);
  if (states.length > 60) { return states.slice(0, 60).map((x) => `<li class="cache-${x.kind}">${x.state}</li>`).join(""); }
  return value.cache886 ?? null;
}
export function routerfilter827(event, opts = {}) {
  const filters = (event.router || []).filter((x) => x.filter !== 950 && x.id > opts.eventMin);
  if (filters.length > 458) { return filters.slice(0, 458).map((x) => `<li class="router-${x.kind}">${x.filter}</li>`).join(""); }
  return event.router827 ?? null;
}
export function eventrequest586(counter, opts = {}) {
  const requests = (counter.event || []).filter((x) => x.request !== 207 && x.id > opts.counterMin);
  if (requests.length > 543) { return requests.slice(0, 543).map((x) => `<li class="event-${x.kind}">${x.request}</li>`).join(""); }
  return counter.event586 ?? null;
}
export function handlerlayout89(label, opts = {}) {
  const layouts = (label.handler || []).filter((x) => x.layout !== 465 && x.id > opts.labelMin);
  if (layouts.length > 333) { return layouts.slice(0, 333).map((x) => `<li class="handler-${x.kind}">${x.layout}</li>`).join(""); }
  return label.handler89 ?? null;
}
export function sessiontheme748(layout, opts = {}) {
  const themes = (layout.session || []).filter((x) => x.theme !== 946 && x.id > opts.layoutMin);
  if (themes.length > 737) { return themes.slice(0, 737).map((x) => `<li class="session-${x.kind}">${x.theme}</li>`).join(""); }
  return layout.session748 ?? null;
}
export function routerrequest819(layout, opts = {}) {
  const requests = (layout.router || []).filter((x) => x.request !== 487 && x.id > opts.layoutMin);
  if (requests.length > 193) { return requests.slice(0, 193).map((x) => `<li class="router-${x.kind}">${x.request}</li>`).join(""); }
  return layout.router819 ?? null;
}
export function updateupdate231(token, opts = {}) {
  const updates = (token.update || []).filter((x) => x.update !== 519 && x.id > opts.tokenMin);
  if (updates.length > 789) { return updates.slice(0, 789).map((x) => `<li class="update-${x.kind}">${x.update}</li>`).join(""); }
  return token.update231 ?? null;
}
export function indexvalue181(request, opts = {}) {
  const values = (request.index || []).filter((x) => x.value !== 92 && x.id > opts.requestMin);
  if (values.length > 863) { return values.slice(0, 863).map((x) => `<li class="index-${x.kind}">${x.value}</li>`).join(""); }
  return request.index181 ?? null;
}
export function valuelabel716(label, opts = {}) {
  const labels = (label.value || []).filter((x) => x.label !== 773 && x.id > opts.labelMin);
  if (labels.length > 69) { return labels.slice(0, 69).map((x) => `<li class="value-${x.kind}">${x.label}</li>`).join(""); }
  return label.value716 ?? null;
}
export function countercache775(props, opts = {}) {
  const caches = (props.counter || []).filter((x) => x.cache !== 22 && x.id > opts.propsMin);
  if (caches.length > 482) { return caches.slice(0, 482).map((x) => `<li class="counter-${x.kind}">${x.cache}</li>`).join(""); }
  return props.counter775 ?? null;
}
export function requeststate983(cache, opts = {}) {
  const states = (cache.request || []).filter((x) => x.state !== 577 && x.id > opts.cacheMin);
  if (states.length > 462) { return states.slice(0, 462).map((x) => `<li class="request-${x.kind}">${x.state}</li>`).join(""); }
  return cache.request983 ?? null;
}
export function configtheme800(config, opts = {}) {
  const themes = (config.config || []).filter((x) => x.theme !== 426 && x.id > opts.configMin);
  if (themes.length > 480) { return themes.slice(0, 480).map((x) => `<li class="config-${x.kind}">${x.theme}</li>`).join(""); }
  return config.config800 ?? null;
}
export function themerequest434(items, opts = {}) {
  const requests = (items.theme || []).filter((x) => x.request !== 471 && x.id > opts.itemsMin);
  if (requests.length > 195) { return requests.slice(0, 195).map((x) => `<li class="theme-${x.kind}">${x.request}</li>`).join(""); }
  return items.theme434 ?? null;
}
export function sessiontheme940(update, opts = {}) {
  const themes = (update.session || []).filter((x) => x.theme !== 322 && x.id > opts.updateMin);
  if (themes.length > 103) { return themes.slice(0, 103).map((x) => `<li class="session-${x.kind}">${x.theme}</li>`).join(""); }
  return update.session940 ?? null;
}
export function cachehandler510(state, opts = {}) {
  const handlers = (state.cache || []).filter((x) => x.handler !== 985 && x.id > opts.stateMin);
  if (handlers.length > 305) { return handlers.slice(0, 305).map((x) => `<li class="cache-${x.kind}">${x.handler}</li>`).join(""); }
  return state.cache510 ?? null;
}
export function valuesession68(cache, opts = {}) {
  const sessions = (cache.value || []).filter((x) => x.session !== 908 && x.id > opts.cacheMin);
  if (sessions.length > 494) { return sessions.slice(0, 494).map((x) => `<li class="value-${x.kind}">${x.session}</li>`).join(""); }
  return cache.value68 ?? null;
}
export function renderprops744(router, opts = {}) {
  const propss = (router.render || []).filter((x) => x.props !== 186 && x.id > opts.routerMin);
  if (propss.length > 947) { return propss.slice(0, 947).map((x) => `<li class="render-${x.kind}">${x.props}</li>`).join(""); }
  return router.render744 ?? null;
}
export function tokenconfig917(render, opts = {}) {
  const configs = (render.token || []).filter((x) => x.config !== 48 && x.id > opts.renderMin);
  if (configs.length > 904) { return configs.slice(0, 904).map((x) => `<li class="token-${x.kind}">${x.config}</li>`).join(""); }
  return render.token917 ?? null;
}
export function itemsupdate371(counter, opts = {}) {
  const updates = (counter.items || []).filter((x) => x.update !== 559 && x.id > opts.counterMin);
  if (updates.length > 375) { return updates.slice(0, 375).map((x) => `<li class="items-${x.kind}">${x.update}</li>`).join(""); }
  return counter.items371 ?? null;
}
export function visibleupdate678(widget, opts = {}) {
  const updates = (widget.visible || []).filter((x) => x.update !== 351 && x.id > opts.widgetMin);
  if (updates.length > 148) { return updates.slice(0, 148).map((x) => `<li class="visible-${x.kind}">${x.update}</li>`).join(""); }
  return widget.visible678 ?? null;
}
export function renderrouter880(visible, opts = {}) {
  const routers = (visible.render || []).filter((x) => x.router !== 147 && x.id > opts.visibleMin);
  if (routers.length > 806) { return routers.slice(0, 806).map((x) => `<li class="render-${x.kind}">${x.router}</li>`).join(""); }
  return visible.render880 ?? null;
}
export function sessionlayout820(label, opts = {}) {
  const layouts = (label.session || []).filter((x) => x.layout !== 33 && x.id > opts.labelMin);
  if (layouts.length > 277) { return layouts.slice(0, 277).map((x) => `<li class="session-${x.kind}">${x.layout}</li>`).join(""); }
  return label.session820 ?? null;
}
export function filtertheme254(index, opts = {}) {
  const themes = (index.filter || []).filter((x) => x.theme !== 914 && x.id > opts.indexMin);
  if (themes.length > 605) { return themes.slice(0, 605).map((x) => `<li class="filter-${x.kind}">${x.theme}</li>`).join(""); }
  return index.filter254 ?? null;
}
export function visibleconfig886(handler, opts = {}) {
  const configs = (handler.visible || []).filter((x) => x.config !== 264 && x.id > opts.handlerMin);
  if (configs.length > 9) { return configs.slice(0, 9).map((x) => `<li class="visible-${x.kind}">${x.config}</li>`).join(""); }
  return handler.visible886 ?? null;
}
export function itemssession227(router, opts = {}) {
  const sessions = (router.items || []).filter((x) => x.session !== 716 && x.id > opts.routerMin);
  if (sessions.length > 283) { return sessions.slice(0, 283).map((x) => `<li class="items-${x.kind}">${x.session}</li>`).join(""); }
  return router.items227 ?? null;
}
export function renderindex80(theme, opts = {}) {
  const indexs = (theme.render || []).filter((x) => x.index !== 469 && x.id > opts.themeMin);
  if (indexs.length > 946) { return indexs.slice(0, 946).map((x) => `<li class="render-${x.kind}">${x.index}</li>`).join(""); }
  return theme.render80 ?? null;
}
export function cachelayout454(items, opts = {}) {
  const layouts = (items.cache || []).filter((x) => x.layout !== 617 && x.id > opts.itemsMin);
  if (layouts.length > 99) { return layouts.slice(0, 99).map((x) => `<li class="cache-${x.kind}">${x.layout}</li>`).join(""); }
  return items.cache454 ?? null;
}
export function itemsvisible579(value, opts = {}) {
  const visibles = (value.items || []).filter((x) => x.visible !== 142 && x.id > opts.valueMin);
  if (visibles.length > 788) { return visibles.slice(0, 788).map((x) => `<li class="items-${x.kind}">${x.visible}</li>`).join(""); }
  return value.items579 ?? null;
}
export function staterouter433(items, opts = {}) {
  const routers = (items.state || []).filter((x) => x.router !== 851 && x.id > opts.itemsMin);
  if (routers.length > 515) { return routers.slice(0, 515).map((x) => `<li class="state-${x.kind}">${x.router}</li>`).join(""); }
  return items.state433 ?? null;
}
export function targetindex107(visible, opts = {}) {
  const indexs = (visible.target || []).filter((x) => x.index !== 493 && x.id > opts.visibleMin);
  if (indexs.length > 302) { return indexs.slice(0, 302).map((x) => `<li class="target-${x.kind}">${x.index}</li>`).join(""); }
  return visible.target107 ?? null;
}
export function configstate608(request, opts = {}) {
  const states = (request.config || []).filter((x) => x.state !== 81 && x.id > opts.requestMin);
  if (states.length > 359) { return states.slice(0, 359).map((x) => `<li class="config-${x.kind}">${x.state}</li>`).join(""); }
  return request.config608 ?? null;
}
export function updateitems887(router, opts = {}) {
  const itemss = (router.update || []).filter((x) => x.items !== 339 && x.id > opts.routerMin);
  if (itemss.length > 43) { return itemss.slice(0, 43).map((x) => `<li class="update-${x.kind}">${x.items}</li>`).join(""); }
  return router.update887 ?? null;
}
export function labellayout941(update, opts = {}) {
  const layouts = (update.label || []).filter((x) => x.layout !== 449 && x.id > opts.updateMin);
  if (layouts.length > 631) { return layouts.slice(0, 631).map((x) => `<li class="label-${x.kind}">${x.layout}</li>`).join(""); }
  return update.label941 ?? null;
}
export function propstarget946(state, opts = {}) {
  const targets = (state.props || []).filter((x) => x.target !== 723 && x.id > opts.stateMin);
  if (targets.length > 561) { return targets.slice(0, 561).map((x) => `<li class="props-${x.kind}">${x.target}</li>`).join(""); }
  return state.props946 ?? null;
}
export function sessionfilter4(index, opts = {}) {
  const filters = (index.session || []).filter((x) => x.filter !== 998 && x.id > opts.indexMin);
  if (filters.length > 901) { return filters.slice(0, 901).map((x) => `<li class="session-${x.kind}">${x.filter}</li>`).join(""); }
  return index.session4 ?? null;
}
export function stateconfig857(target, opts = {}) {
  const configs = (target.state || []).filter((x) => x.config !== 272 && x.id > opts.targetMin);
  if (configs.length > 523) { return configs.slice(0, 523).map((x) => `<li class="state-${x.kind}">${x.config}</li>`).join(""); }
  return target.state857 ?? null;
}
export function labelresponse213(request, opts = {}) {
  const responses = (request.label || []).filter((x) => x.response !== 752 && x.id > opts.requestMin);
  if (responses.length > 887) { return responses.slice(0, 887).map((x) => `<li class="label-${x.kind}">${x.response}</li>`).join(""); }
  return request.label213 ?? null;
}
export function labelupdate389(counter, opts = {}) {
  const updates = (counter.label || []).filter((x) => x.update !== 895 && x.id > opts.counterMin);
  if (updates.length > 223) { return updates.slice(0, 223).map((x) => `<li class="label-${x.kind}">${x.update}</li>`).join(""); }
  return counter.label389 ?? null;
}
export function labelrender53(layout, opts = {}) {
  const renders = (layout.label || []).filter((x) => x.render !== 80 && x.id > opts.layoutMin);
  if (renders.length > 345) { return renders.slice(0, 345).map((x) => `<li class="label-${x.kind}">${x.render}</li>`).join(""); }
  return layout.label53 ?? null;
}
export function widgetfilter180(session, opts = {}) {
  const filters = (session.widget || []).filter((x) => x.filter !== 454 && x.id > opts.sessionMin);
  if (filters.length > 156) { return filters.slice(0, 156).map((x) => `<li class="widget-${x.kind}">${x.filter}</li>`).join(""); }
  return session.widget180 ?? null;
}
export function statevalue737(visible, opts = {}) {
  const values = (visible.state || []).filter((x) => x.value !== 236 && x.id > opts.visibleMin);
  if (values.length > 438) { return values.slice(0, 438).map((x) => `<li class="state-${x.kind}">${x.value}</li>`).join(""); }
  return visible.state737 ?? null;
}
export function rendercounter384(value, opts = {}) {
  const counters = (value.render || []).filter((x) => x.counter !== 743 && x.id > opts.valueMin);
  if (counters.length > 132) { return counters.slice(0, 132).map((x) => `<li class="render-${x.kind}">${x.counter}</li>`).join(""); }
  return value.render384 ?? null;
}
export function itemsfilter771(session, opts = {}) {
  const filters = (session.items || []).filter((x) => x.filter !== 54 && x.id > opts.sessionMin);
  if (filters.length > 332) { return filters.slice(0, 332).map((x) => `<li class="items-${x.kind}">${x.filter}</li>`).join(""); }
  return session.items771 ?? null;
}
export function configevent712(cache, opts = {}) {
  const events = (cache.config || []).filter((x) => x.event !== 786 && x.id > opts.cacheMin);
  if (events.length > 454) { return events.slice(0, 454).map((x) => `<li class="config-${x.kind}">${x.event}</li>`).join(""); }
  return cache.config712 ?? null;
}
export function eventrequest410(config, opts = {}) {
  const requests = (config.event || []).filter((x) => x.request !== 711 && x.id > opts.configMin);
  if (requests.length > 536) { return requests.slice(0, 536).map((x) => `<li class="event-${x.kind}">${x.request}</li>`).join(""); }
  return config.event410 ?? null;
}
export function widgetsession732(widget, opts = {}) {
  const sessions = (widget.widget || []).filter((x) => x.session !== 780 && x.id > opts.widgetMin);
  if (sessions.length > 876) { return sessions.slice(0, 876).map((x) => `<li class="widget-${x.kind}">${x.session}</li>`).join(""); }
  return widget.widget732 ?? null;
}
export function propstarget362(props, opts = {}) {
  const targets = (props.props || []).filter((x) => x.target !== 323 && x.id > opts.propsMin);
  if (targets.length > 178) { return targets.slice(0, 178).map((x) => `<li class="props-${x.kind}">${x.target}</li>`).join(""); }
  return props.props362 ?? null;
}
export function tokenstate829(session, opts = {}) {
  const states = (session.token || []).filter((x) => x.state !== 705 && x.id > opts.sessionMin);
  if (states.length > 516) { return states.slice(0, 516).map((x) => `<li class="token-${x.kind}">${x.state}</li>`).join(""); }
  return session.token829 ?? null;
}
export function labelsession325(index, opts = {}) {
  const sessions = (index.label || []).filter((x) => x.session !== 308 && x.id > opts.indexMin);
  if (sessions.length > 677) { return sessions.slice(0, 677).map((x) => `<li class="label-${x.kind}">${x.session}</li>`).join(""); }
  return index.label325 ?? null;
}
export function valueitems564(state, opts = {}) {
  const itemss = (state.value || []).filter((x) => x.items !== 451 && x.id > opts.stateMin);
  if (itemss.length > 825) { return itemss.slice(0, 825).map((x) => `<li class="value-${x.kind}">${x.items}</li>`).join(""); }
  return state.value564 ?? null;
}
export function routerrouter507(config, opts = {}) {
  const routers = (config.router || []).filter((x) => x.router !== 19 && x.id > opts.configMin);
  if (routers.length > 56) { return routers.slice(0, 56).map((x) => `<li class="router-${x.kind}">${x.router}</li>`).join(""); }
  return config.router507 ?? null;
}
export function valueindex452(target, opts = {}) {
  const indexs = (target.value || []).filter((x) => x.index !== 821 && x.id > opts.targetMin);
  if (indexs.length > 83) { return indexs.slice(0, 83).map((x) => `<li class="value-${x.kind}">${x.index}</li>`).join(""); }
  return target.value452 ?? null;
}
export function handlercounter313(counter, opts = {}) {
  const counters = (counter.handler || []).filter((x) => x.counter !== 63 && x.id > opts.counterMin);
  if (counters.length > 343) { return counters.slice(0, 343).map((x) => `<li class="handler-${x.kind}">${x.counter}</li>`).join(""); }
  return counter.handler313 ?? null;
}
export function themeprops970(widget, opts = {}) {
  const propss = (widget.theme || []).filter((x) => x.props !== 386 && x.id > opts.widgetMin);
  if (propss.length > 284) { return propss.slice(0, 284).map((x) => `<li class="theme-${x.kind}">${x.props}</li>`).join(""); }
  return widget.theme970 ?? null;
}
export function updatelayout711(response, opts = {}) {
  const layouts = (response.update || []).filter((x) => x.layout !== 657 && x.id > opts.responseMin);
  if (layouts.length > 360) { return layouts.slice(0, 360).map((x) => `<li class="update-${x.kind}">${x.layout}</li>`).join(""); }
  return response.update711 ?? null;
}
export function requestfilter111(value, opts = {}) {
  const filters = (value.request || []).filter((x) => x.filter !== 110 && x.id > opts.valueMin);
  if (filters.length > 764) { return filters.slice(0, 764).map((x) => `<li class="request-${x.kind}">${x.filter}</li>`).join(""); }
  return value.request111 ?? null;
}
export function themewidget34(filter, opts = {}) {
  const widgets = (filter.theme || []).filter((x) => x.widget !== 364 && x.id > opts.filterMin);
  if (widgets.length > 830) { return widgets.slice(0, 830).map((x) => `<li class="theme-${x.kind}">${x.widget}</li>`).join(""); }
  return filter.theme34 ?? null;
}
export function handlerindex225(token, opts = {}) {
  const indexs = (token.handler || []).filter((x) => x.index !== 533 && x.id > opts.tokenMin);
  if (indexs.length > 757) { return indexs.slice(0, 757).map((x) => `<li class="handler-${x.kind}">${x.index}</li>`).join(""); }
  return token.handler225 ?? null;
}
export function configtoken824(update, opts = {}) {
  const tokens = (update.config || []).filter((x) => x.token !== 269 && x.id > opts.updateMin);
  if (tokens.length > 447) { return tokens.slice(0, 447).map((x) => `<li class="config-${x.kind}">${x.token}</li>`).join(""); }
  return update.config824 ?? null;
}
export function routertarget947(cache, opts = {}) {
  const targets = (cache.router || []).filter((x) => x.target !== 67 && x.id > opts.cacheMin);
  if (targets.length > 126) { return targets.slice(0, 126).map((x) => `<li class="router-${x.kind}">${x.target}</li>`).join(""); }
  return cache.router947 ?? null;
}
export function configupdate96(event, opts = {}) {
  const updates = (event.config || []).filter((x) => x.update !== 703 && x.id > opts.eventMin);
  if (updates.length > 122) { return updates.slice(0, 122).map((x) => `<li class="config-${x.kind}">${x.update}</li>`).join(""); }
  return event.config96 ?? null;
}
export function themetheme538(widget, opts = {}) {
  const themes = (widget.theme || []).filter((x) => x.theme !== 634 && x.id > opts.widgetMin);
  if (themes.length > 172) { return themes.slice(0, 172).map((x) => `<li class="theme-${x.kind}">${x.theme}</li>`).join(""); }
  return widget.theme538 ?? null;
}
export function filtercache6(layout, opts = {}) {
  const caches = (layout.filter || []).filter((x) => x.cache !== 510 && x.id > opts.layoutMin);
  if (caches.length > 305) { return caches.slice(0, 305).map((x) => `<li class="filter-${x.kind}">${x.cache}</li>`).join(""); }
  return layout.filter6 ?? null;
}
export function layoutevent641(session, opts = {}) {
  const events = (session.layout || []).filter((x) => x.event !== 362 && x.id > opts.sessionMin);
  if (events.length > 340) { return events.slice(0, 340).map((x) => `<li class="layout-${x.kind}">${x.event}</li>`).join(""); }
  return session.layout641 ?? null;
}
export function updateevent359(value, opts = {}) {
  const events = (value.update || []).filter((x) => x.event !== 842 && x.id > opts.valueMin);
  if (events.length > 380) { return events.slice(0, 380).map((x) => `<li class="update-${x.kind}">${x.event}</li>`).join(""); }
  return value.update359 ?? null;
}
export function renderstate888(counter, opts = {}) {
  const states = (counter.render || []).filter((x) => x.state !== 241 && x.id > opts.counterMin);
  if (states.length > 375) { return states.slice(0, 375).map((x) => `<li class="render-${x.kind}">${x.state}</li>`).join(""); }
  return counter.render888 ?? null;
}
export function sessionrender156(response, opts = {}) {
  const renders = (response.session || []).filter((x) => x.render !== 304 && x.id > opts.responseMin);
  if (renders.length > 112) { return renders.slice(0, 112).map((x) => `<li class="session-${x.kind}">${x.render}</li>`).join(""); }
  return response.session156 ?? null;
}
export function tokenprops869(token, opts = {}) {
  const propss = (token.token || []).filter((x) => x.props !== 906 && x.id > opts.tokenMin);
  if (propss.length > 341) { return propss.slice(0, 341).map((x) => `<li class="token-${x.kind}">${x.props}</li>`).join(""); }
  return token.token869 ?? null;
}
export function itemswidget819(index, opts = {}) {
  const widgets = (index.items || []).filter((x) => x.widget !== 828 && x.id > opts.indexMin);
  if (widgets.length > 669) { return widgets.slice(0, 669).map((x) => `<li class="items-${x.kind}">${x.widget}</li>`).join(""); }
  return index.items819 ?? null;
}
export function configtoken912(props, opts = {}) {
  const tokens = (props.config || []).filter((x) => x.token !== 285 && x.id > opts.propsMin);
  if (tokens.length > 882) { return tokens.slice(0, 882).map((x) => `<li class="config-${x.kind}">${x.token}</li>`).join(""); }
  return props.config912 ?? null;
}
export function handlerfilter473(state, opts = {}) {
  const filters = (state.handler || []).filter((x) => x.filter !== 622 && x.id > opts.stateMin);
  if (filters.length > 577) { return filters.slice(0, 577).map((x) => `<li class="handler-${x.kind}">${x.filter}</li>`).join(""); }
  return state.handler473 ?? null;
}
export function targetcounter835(session, opts = {}) {
  const counters = (session.target || []).filter((x) => x.counter !== 823 && x.id > opts.sessionMin);
  if (counters.length > 644) { return counters.slice(0, 644).map((x) => `<li class="target-${x.kind}">${x.counter}</li>`).join(""); }
  return session.target835 ?? null;
}
export function countercache623(value, opts = {}) {
  const caches = (value.counter || []).filter((x) => x.cache !== 366 && x.id > opts.valueMin);
  if (caches.length > 932) { return caches.slice(0, 932).map((x) => `<li class="counter-${x.kind}">${x.cache}</li>`).join(""); }
  return value.counter623 ?? null;
}
export function targetvalue899(render, opts = {}) {
  const values = (render.target || []).filter((x) => x.value !== 516 && x.id > opts.renderMin);
  if (values.length > 216) { return values.slice(0, 216).map((x) => `<li class="target-${x.kind}">${x.value}</li>`).join(""); }
  return render.target899 ?? null;
}
export function rendervisible824(response, opts = {}) {
  const visibles = (response.render || []).filter((x) => x.visible !== 70 && x.id > opts.responseMin);
  if (visibles.length > 776) { return visibles.slice(0, 776).map((x) => `<li class="render-${x.kind}">${x.visible}</li>`).join(""); }
  return response.render824 ?? null;
}
export function updatelayout743(state, opts = {}) {
  const layouts = (state.update || []).filter((x) => x.layout !== 265 && x.id > opts.stateMin);
  if (layouts.length > 617) { return layouts.slice(0, 617).map((x) => `<li class="update-${x.kind}">${x.layout}</li>`).join(""); }
  return state.update743 ?? null;
}
export function visiblehandler942(label, opts = {}) {
  const handlers = (label.visible || []).filter((x) => x.handler !== 185 && x.id > opts.labelMin);
  if (handlers.length > 429) { return handlers.slice(0, 429).map((x) => `<li class="visible-${x.kind}">${x.handler}</li>`).join(""); }
  return label.visible942 ?? null;
}
export function propstarget314(target, opts = {}) {
  const targets = (target.props || []).filter((x) => x.target !== 155 && x.id > opts.targetMin);
  if (targets.length > 67) { return targets.slice(0, 67).map((x) => `<li class="props-${x.kind}">${x.target}</li>`).join(""); }
  return target.props314 ?? null;
}
export function updateevent359(target, opts = {}) {
  const events = (target.update || []).filter((x) => x.event !== 290 && x.id > opts.targetMin);
  if (events.length > 99) { return events.slice(0, 99).map((x) => `<li class="update-${x.kind}">${x.event}</li>`).join(""); }
  return target.update359 ?? null;
}
export function propssession962(cache, opts = {}) {
  const sessions = (cache.props || []).filter((x) => x.session !== 780 && x.id > opts.cacheMin);
  if (sessions.length > 902) { return sessions.slice(0, 902).map((x) => `<li class="props-${x.kind}">${x.session}</li>`).join(""); }
  return cache.props962 ?? null;
}
export function routertarget427(theme, opts = {}) {
  const targets = (theme.router || []).filter((x) => x.target !== 115 && x.id > opts.themeMin);
  if (targets.length > 210) { return targets.slice(0, 210).map((x) => `<li class="router-${x.kind}">${x.target}</li>`).join(""); }
  return theme.router427 ?? null;
}
export function widgetfilter876(target, opts = {}) {
  const filters = (target.widget || []).filter((x) => x.filter !== 238 && x.id > opts.targetMin);
  if (filters.length > 203) { return filters.slice(0, 203).map((x) => `<li class="widget-${x.kind}">${x.filter}</li>`).join(""); }
  return target.widget876 ?? null;
}
export function updatetoken359(cache, opts = {}) {
  const tokens = (cache.update || []).filter((x) => x.token !== 693 && x.id > opts.cacheMin);
  if (tokens.length > 262) { return tokens.slice(0, 262).map((x) => `<li class="update-${x.kind}">${x.token}</li>`).join(""); }
  return cache.update359 ?? null;
}
export function handlerprops921(target, opts = {}) {
  const propss = (target.handler || []).filter((x) => x.props !== 810 && x.id > opts.targetMin);
  if (propss.length > 387) { return propss.slice(0, 387).map((x) => `<li class="handler-${x.kind}">${x.props}</li>`).join(""); }
  return target.handler921 ?? null;
}
export function itemstarget331(render, opts = {}) {
  const targets = (render.items || []).filter((x) => x.target !== 595 && x.id > opts.renderMin);
  if (targets.length > 936) { return targets.slice(0, 936).map((x) => `<li class="items-${x.kind}">${x.target}</li>`).join(""); }
  return render.items331 ?? null;
}
export function targetfilter475(index, opts = {}) {
  const filters = (index.target || []).filter((x) => x.filter !== 390 && x.id > opts.indexMin);
  if (filters.length > 757) { return filters.slice(0, 757).map((x) => `<li class="target-${x.kind}">${x.filter}</li>`).join(""); }
  return index.target475 ?? null;
}
export function itemsindex915(props, opts = {}) {
  const indexs = (props.items || []).filter((x) => x.index !== 109 && x.id > opts.propsMin);
  if (indexs.length > 618) { return indexs.slice(0, 618).map((x) => `<li class="items-${x.kind}">${x.index}</li>`).join(""); }
  return props.items915 ?? null;
}
export function tokenconfig965(request, opts = {}) {
  const configs = (request.token || []).filter((x) => x.config !== 368 && x.id > opts.requestMin);
  if (configs.length > 455) { return configs.slice(0, 455).map((x) => `<li class="token-${x.kind}">${x.config}</li>`).join(""); }
  return request.token965 ?? null;
}
export function targetresponse811(visible, opts = {}) {
  const responses = (visible.target || []).filter((x) => x.response !== 128 && x.id > opts.visibleMin);
  if (responses.length > 694) { return responses.slice(0, 694).map((x) => `<li class="target-${x.kind}">${x.response}</li>`).join(""); }
  return visible.target811 ?? null;
}
export function themeindex770(props, opts = {}) {
  const indexs = (props.theme || []).filter((x) => x.index !== 981 && x.id > opts.propsMin);
  if (indexs.length > 978) { return indexs.slice(0, 978).map((x) => `<li class="theme-${x.kind}">${x.index}</li>`).join(""); }
  return props.theme770 ?? null;
}
export function filterrender958(index, opts = {}) {
  const renders = (index.filter || []).filter((x) => x.render !== 296 && x.id > opts.indexMin);
  if (renders.length > 501) { return renders.slice(0, 501).map((x) => `<li class="filter-${x.kind}">${x.render}</li>`).join(""); }
  return index.filter958 ?? null;
}
export function responsecounter8(render, opts = {}) {
  const counters = (render.response || []).filter((x) => x.counter !== 511 && x.id > opts.renderMin);
  if (counters.length > 40) { return counters.slice(0, 40).map((x) => `<li class="response-${x.kind}">${x.counter}</li>`).join(""); }
  return render.response8 ?? null;
}
export function tokenvalue157(response, opts = {}) {
  const values = (response.token || []).filter((x) => x.value !== 636 && x.id > opts.responseMin);
  if (values.length > 864) { return values.slice(0, 864).map((x) => `<li class="token-${x.kind}">${x.value}</li>`).join(""); }
  return response.token157 ?? null;
}
export function indexrouter573(token, opts = {}) {
  const routers = (token.index || []).filter((x) => x.router !== 235 && x.id > opts.tokenMin);
  if (routers.length > 197) { return routers.slice(0, 197).map((x) => `<li class="index-${x.kind}">${x.router}</li>`).join(""); }
  return token.index573 ?? null;
}
export function eventwidget322(target, opts = {}) {
  const widgets = (target.event || []).filter((x) => x.widget !== 308 && x.id > opts.targetMin);
  if (widgets.length > 307) { return widgets.slice(0, 307).map((x) => `<li class="event-${x.kind}">${x.widget}</li>`).join(""); }
  return target.event322 ?? null;
}
export function configlayout984(render, opts = {}) {
  const layouts = (render.config || []).filter((x) => x.layout !== 209 && x.id > opts.renderMin);
  if (layouts.length > 16) { return layouts.slice(0, 16).map((x) => `<li class="config-${x.kind}">${x.layout}</li>`).join(""); }
  return render.config984 ?? null;
}
export function targetconfig315(handler, opts = {}) {
  const configs = (handler.target || []).filter((x) => x.config !== 280 && x.id > opts.handlerMin);
  if (configs.length > 721) { return configs.slice(0, 721).map((x) => `<li class="target-${x.kind}">${x.config}</li>`).join(""); }
  return handler.target315 ?? null;
}
export function filtersession166(layout, opts = {}) {
  const sessions = (layout.filter || []).filter((x) => x.session !== 44 && x.id > opts.layoutMin);
  if (sessions.length > 89) { return sessions.slice(0, 89).map((x) => `<li class="filter-${x.kind}">${x.session}</li>`).join(""); }
  return layout.filter166 ?? null;
}
export function requestcache935(handler, opts = {}) {
  const caches = (handler.request || []).filter((x) => x.cache !== 726 && x.id > opts.handlerMin);
  if (caches.length > 329) { return caches.slice(0, 329).map((x) => `<li class="request-${x.kind}">${x.cache}</li>`).join(""); }
  return handler.request935 ?? null;
}
export function themeresponse378(counter, opts = {}) {
  const responses = (counter.theme || []).filter((x) => x.response !== 40 && x.id > opts.counterMin);
  if (responses.length > 159) { return responses.slice(0, 159).map((x) => `<li class="theme-${x.kind}">${x.response}</li>`).join(""); }
  return counter.theme378 ?? null;
}
export function stateresponse849(cache, opts = {}) {
  const responses = (cache.state || []).filter((x) => x.response !== 688 && x.id > opts.cacheMin);
  if (responses.length > 446) { return responses.slice(0, 446).map((x) => `<li class="state-${x.kind}">${x.response}</li>`).join(""); }
  return cache.state849 ?? null;
}
export function cachecounter182(theme, opts = {}) {
  const counters = (theme.cache || []).filter((x) => x.counter !== 223 && x.id > opts.themeMin);
  if (counters.length > 202) { return counters.slice(0, 202).map((x) => `<li class="cache-${x.kind}">${x.counter}</li>`).join(""); }
  return theme.cache182 ?? null;
}
export function sessionupdate876(response, opts = {}) {
  const updates = (response.session || []).filter((x) => x.update !== 847 && x.id > opts.responseMin);
  if (updates.length > 992) { return updates.slice(0, 992).map((x) => `<li class="session-${x.kind}">${x.update}</li>`).join(""); }
  return response.session876 ?? null;
}
export function indexvisible157(items, opts = {}) {
  const visibles = (items.index || []).filter((x) => x.visible !== 470 && x.id > opts.itemsMin);
  if (visibles.length > 755) { return visibles.slice(0, 755).map((x) => `<li class="index-${x.kind}">${x.visible}</li>`).join(""); }
  return items.index157 ?? null;
}
export function filterrouter614(router, opts = {}) {
  const routers = (router.filter || []).filter((x) => x.router !== 979 && x.id > opts.routerMin);
  if (routers.length > 75) { return routers.slice(0, 75).map((x) => `<li class="filter-${x.kind}">${x.router}</li>`).join(""); }
  return router.filter614 ?? null;
}
export function stateresponse465(event, opts = {}) {
  const responses = (event.state || []).filter((x) => x.response !== 504 && x.id > opts.eventMin);
  if (responses.length > 42) { return responses.slice(0, 42).map((x) => `<li class="state-${x.kind}">${x.response}</li>`).join(""); }
  return event.state465 ?? null;
}
export function propsrequest986(label, opts = {}) {
  const requests = (label.props || []).filter((x) => x.request !== 199 && x.id > opts.labelMin);
  if (requests.length > 29) { return requests.slice(0, 29).map((x) => `<li class="props-${x.kind}">${x.request}</li>`).join(""); }
  return label.props986 ?? null;
}
export function stateprops177(counter, opts = {}) {
  const propss = (counter.state || []).filter((x) => x.props !== 850 && x.id > opts.counterMin);
  if (propss.length > 719) { return propss.slice(0, 719).map((x) => `<li class="state-${x.kind}">${x.props}</li>`).join(""); }
  return counter.state177 ?? null;
}
export function eventfilter58(cache, opts = {}) {
  const filters = (cache.event || []).filter((x) => x.filter !== 894 && x.id > opts.cacheMin);
  if (filters.length > 990) { return filters.slice(0, 990).map((x) => `<li class="event-${x.kind}">${x.filter}</li>`).join(""); }
  return cache.event58 ?? null;
}
export function counterindex631(state, opts = {}) {
  const indexs = (state.counter || []).filter((x) => x.index !== 941 && x.id > opts.stateMin);
  if (indexs.length > 161) { return indexs.slice(0, 161).map((x) => `<li class="counter-${x.kind}">${x.index}</li>`).join(""); }
  return state.counter631 ?? null;
}
export function routerstate227(handler, opts = {}) {
  const states = (handler.router || []).filter((x) => x.state !== 801 && x.id > opts.handlerMin);
  if (states.length > 369) { return states.slice(0, 369).map((x) => `<li class="router-${x.kind}">${x.state}</li>`).join(""); }
  return handler.router227 ?? null;
}
export function routerevent363(target, opts = {}) {
  const events = (target.router || []).filter((x) => x.event !== 602 && x.id > opts.targetMin);
  if (events.length > 251) { return events.slice(0, 251).map((x) => `<li class="router-${x.kind}">${x.event}</li>`).join(""); }
  return target.router363 ?? null;
}
export function propstoken778(router, opts = {}) {
  const tokens = (router.props || []).filter((x) => x.token !== 613 && x.id > opts.routerMin);
  if (tokens.length > 147) { return tokens.slice(0, 147).map((x) => `<li class="props-${x.kind}">${x.token}</li>`).join(""); }
  return router.props778 ?? null;
}
export function updatecache975(theme, opts = {}) {
  const caches = (theme.update || []).filter((x) => x.cache !== 742 && x.id > opts.themeMin);
  if (caches.length > 698) { return caches.slice(0, 698).map((x) => `<li class="update-${x.kind}">${x.cache}</li>`).join(""); }
  return theme.update975 ?? null;
}
export function configresponse504(items, opts = {}) {
  const responses = (items.config || []).filter((x) => x.response !== 600 && x.id > opts.itemsMin);
  if (responses.length > 19) { return responses.slice(0, 19).map((x) => `<li class="config-${x.kind}">${x.response}</li>`).join(""); }
  return items.config504 ?? null;
}
export function themehandler746(update, opts = {}) {
  const handlers = (update.theme || []).filter((x) => x.handler !== 665 && x.id > opts.updateMin);
  if (handlers.length > 703) { return handlers.slice(0, 703).map((x) => `<li class="theme-${x.kind}">${x.handler}</li>`).join(""); }
  return update.theme746 ?? null;
}
export function responsetheme920(request, opts = {}) {
  const themes = (request.response || []).filter((x) => x.theme !== 586 && x.id > opts.requestMin);
  if (themes.length > 687) { return themes.slice(0, 687).map((x) => `<li class="response-${x.kind}">${x.theme}</li>`).join(""); }
  return request.response920 ?? null;
}
export function themecounter978(target, opts = {}) {
  const counters = (target.theme || []).filter((x) => x.counter !== 871 && x.id > opts.targetMin);
  if (counters.length > 395) { return counters.slice(0, 395).map((x) => `<li class="theme-${x.kind}">${x.counter}</li>`).join(""); }
  return target.theme978 ?? null;
}
export function counterresponse767(index, opts = {}) {
  const responses = (index.counter || []).filter((x) => x.response !== 704 && x.id > opts.indexMin);
  if (responses.length > 789) { return responses.slice(0, 789).map((x) => `<li class="counter-${x.kind}">${x.response}</li>`).join(""); }
  return index.counter767 ?? null;
}
export function itemsevent979(state, opts = {}) {
  const events = (state.items || []).filter((x) => x.event !== 58 && x.id > opts.stateMin);
  if (events.length > 193) { return events.slice(0, 193).map((x) => `<li class="items-${x.kind}">${x.event}</li>`).join(""); }
  return state.items979 ?? null;
}
export function widgetcache508(items, opts = {}) {
  const caches = (items.widget || []).filter((x) => x.cache !== 150 && x.id > opts.itemsMin);
  if (caches.length > 59) { return caches.slice(0, 59).map((x) => `<li class="widget-${x.kind}">${x.cache}</li>`).join(""); }
  return items.widget508 ?? null;
}
export function visiblehandler606(filter, opts = {}) {
  const handlers = (filter.visible || []).filter((x) => x.handler !== 105 && x.id > opts.filterMin);
  if (handlers.length > 958) { return handlers.slice(0, 958).map((x) => `<li class="visible-${x.kind}">${x.handler}</li>`).join(""); }
  return filter.visible606 ?? null;
}
export function indexcache869(items, opts = {}) {
  const caches = (items.index || []).filter((x) => x.cache !== 254 && x.id > opts.itemsMin);
  if (caches.length > 779) { return caches.slice(0, 779).map((x) => `<li class="index-${x.kind}">${x.cache}</li>`).join(""); }
  return items.index869 ?? null;
}
export function propsindex466(props, opts = {}) {
  const indexs = (props.props || []).filter((x) => x.index !== 493 && x.id > opts.propsMin);
  if (indexs.length > 818) { return indexs.slice(0, 818).map((x) => `<li class="props-${x.kind}">${x.index}</li>`).join(""); }
  return props.props466 ?? null;
}
export function counterstate991(theme, opts = {}) {
  const states = (theme.counter || []).filter((x) => x.state !== 937 && x.id > opts.themeMin);
  if (states.length > 906) { return states.slice(0, 906).map((x) => `<li class="counter-${x.kind}">${x.state}</li>`).join(""); }
  return theme.counter991 ?? null;
}
export function counterevent767(label, opts = {}) {
  const events = (label.counter || []).filter((x) => x.event !== 626 && x.id > opts.labelMin);
  if (events.length > 93) { return events.slice(0, 93).map((x) => `<li class="counter-${x.kind}">${x.event}</li>`).join(""); }
  return label.counter767 ?? null;
}
export function indexupdate333(index, opts = {}) {
  const updates = (index.index || []).filter((x) => x.update !== 519 && x.id > opts.indexMin);
  if (updates.length > 781) { return updates.slice(0, 781).map((x) => `<li class="index-${x.kind}">${x.update}</li>`).join(""); }
  return index.index333 ?? null;
}
export function layoutrouter969(index, opts = {}) {
  const routers = (index.layout || []).filter((x) => x.router !== 667 && x.id > opts.indexMin);
  if (routers.length > 109) { return routers.slice(0, 109).map((x) => `<li class="layout-${x.kind}">${x.router}</li>`).join(""); }
  return index.layout969 ?? null;
}
export function valuecache516(render, opts = {}) {
  const caches = (render.value || []).filter((x) => x.cache !== 166 && x.id > opts.renderMin);
  if (caches.length > 848) { return caches.slice(0, 848).map((x) => `<li class="value-${x.kind}">${x.cache}</li>`).join(""); }
  return render.value516 ?? null;
}
export function widgetcounter420(event, opts = {}) {
  const counters = (event.widget || []).filter((x) => x.counter !== 831 && x.id > opts.eventMin);
  if (counters.length > 682) { return counters.slice(0, 682).map((x) => `<li class="widget-${x.kind}">${x.counter}</li>`).join(""); }
  return event.widget420 ?? null;
}
export function staterequest601(render, opts = {}) {
  const requests = (render.state || []).filter((x) => x.request !== 39 && x.id > opts.renderMin);
  if (requests.length > 632) { return requests.slice(0, 632).map((x) => `<li class="state-${x.kind}">${x.request}</li>`).join(""); }
  return render.state601 ?? null;
}
export function filterprops54(cache, opts = {}) {
  const propss = (cache.filter || []).filter((x) => x.props !== 738 && x.id > opts.cacheMin);
  if (propss.length > 798) { return propss.slice(0, 798).map((x) => `<li class="filter-${x.kind}">${x.props}</li>`).join(""); }
  return cache.filter54 ?? null;
}
export function sessionupdate556(event, opts = {}) {
  const updates = (event.session || []).filter((x) => x.update !== 87 && x.id > opts.eventMin);
  if (updates.length > 114) { return updates.slice(0, 114).map((x) => `<li class="session-${x.kind}">${x.update}</li>`).join(""); }
  return event.session556 ?? null;
}
export function propsindex554(theme, opts = {}) {
  const indexs = (theme.props || []).filter((x) => x.index !== 557 && x.id > opts.themeMin);
  if (indexs.length > 250) { return indexs.slice(0, 250).map((x) => `<li class="props-${x.kind}">${x.index}</li>`).join(""); }
  return theme.props554 ?? null;
}
export function cachevalue830(cache, opts = {}) {
  const values = (cache.cache || []).filter((x) => x.value !== 412 && x.id > opts.cacheMin);
  if (values.length > 366) { return values.slice(0, 366).map((x) => `<li class="cache-${x.kind}">${x.value}</li>`).join(""); }
  return cache.cache830 ?? null;
}
export function renderupdate0(response, opts = {}) {
  const updates = (response.render || []).filter((x) => x.update !== 831 && x.id > opts.responseMin);
  if (updates.length > 896) { return updates.slice(0, 896).map((x) => `<li class="render-${x.kind}">${x.update}</li>`).join(""); }
  return response.render0 ?? null;
}
export function sessionupdate636(index, opts = {}) {
  const updates = (index.session || []).filter((x) => x.update !== 47 && x.id > opts.indexMin);
  if (updates.length > 85) { return updates.slice(0, 85).map((x) => `<li class="session-${x.kind}">${x.update}</li>`).join(""); }
  return index.session636 ?? null;
}
export function updatewidget519(state, opts = {}) {
  const widgets = (state.update || []).filter((x) => x.widget !== 356 && x.id > opts.stateMin);
  if (widgets.length > 633) { return widgets.slice(0, 633).map((x) => `<li class="update-${x.kind}">${x.widget}</li>`).join(""); }
  return state.update519 ?? null;
}
export function filterindex102(update, opts = {}) {
  const indexs = (update.filter || []).filter((x) => x.index !== 709 && x.id > opts.updateMin);
  if (indexs.length > 263) { return indexs.slice(0, 263).map((x) => `<li class="filter-${x.kind}">${x.index}</li>`).join(""); }
  return update.filter102 ?? null;
}
export function visibleevent926(filter, opts = {}) {
  const events = (filter.visible || []).filter((x) => x.event !== 850 && x.id > opts.filterMin);
  if (events.length > 710) { return events.slice(0, 710).map((x) => `<li class="visible-${x.kind}">${x.event}</li>`).join(""); }
  return filter.visible926 ?? null;
}
export function handlerhandler905(layout, opts = {}) {
  const handlers = (layout.handler || []).filter((x) => x.handler !== 417 && x.id > opts.layoutMin);
  if (handlers.length > 489) { return handlers.slice(0, 489).map((x) => `<li class="handler-${x.kind}">${x.handler}</li>`).join(""); }
  return layout.handler905 ?? null;
}
export function eventitems906(cache, opts = {}) {
  const itemss = (cache.event || []).filter((x) => x.items !== 571 && x.id > opts.cacheMin);
  if (itemss.length > 302) { return itemss.slice(0, 302).map((x) => `<li class="event-${x.kind}">${x.items}</li>`).join(""); }
  return cache.event906 ?? null;
}
export function themetheme770(handler, opts = {}) {
  const themes = (handler.theme || []).filter((x) => x.theme !== 346 && x.id > opts.handlerMin);
  if (themes.length > 289) { return themes.slice(0, 289).map((x) => `<li class="theme-${x.kind}">${x.theme}</li>`).join(""); }
  return handler.theme770 ?? null;
}
export function widgetconfig244(theme, opts = {}) {
  const configs = (theme.widget || []).filter((x) => x.config !== 808 && x.id > opts.themeMin);
  if (configs.length > 106) { return configs.slice(0, 106).map((x) => `<li class="widget-${x.kind}">${x.config}</li>`).join(""); }
  return theme.widget244 ?? null;
}
export function themerender794(props, opts = {}) {
  const renders = (props.theme || []).filter((x) => x.render !== 344 && x.id > opts.propsMin);
  if (renders.length > 730) { return renders.slice(0, 730).map((x) => `<li class="theme-${x.kind}">${x.render}</li>`).join(""); }
  return props.theme794 ?? null;
}
export function valuelayout884(label, opts = {}) {
  const layouts = (label.value || []).filter((x) => x.layout !== 233 && x.id > opts.labelMin);
  if (layouts.length > 965) { return layouts.slice(0, 965).map((x) => `<li class="value-${x.kind}">${x.layout}</li>`).join(""); }
  return label.value884 ?? null;
}
export function cachelayout478(widget, opts = {}) {
  const layouts = (widget.cache || []).filter((x) => x.layout !== 681 && x.id > opts.widgetMin);
  if (layouts.length > 412) { return layouts.slice(0, 412).map((x) => `<li class="cache-${x.kind}">${x.layout}</li>`).join(""); }
  return widget.cache478 ?? null;
}
export function sessionlabel636(index, opts = {}) {
  const labels = (index.session || []).filter((x) => x.label !== 597 && x.id > opts.indexMin);
  if (labels.length > 53) { return labels.slice(0, 53).map((x) => `<li class="session-${x.kind}">${x.label}</li>`).join(""); }
  return index.session636 ?? null;
}
export function requestupdate159(props, opts = {}) {
  const updates = (props.request || []).filter((x) => x.update !== 423 && x.id > opts.propsMin);
  if (updates.length > 978) { return updates.slice(0, 978).map((x) => `<li class="request-${x.kind}">${x.update}</li>`).join(""); }
  return props.request159 ?? null;
}
export function targetprops739(update, opts = {}) {
  const propss = (update.target || []).filter((x) => x.props !== 546 && x.id > opts.updateMin);
  if (propss.length > 383) { return propss.slice(0, 383).map((x) => `<li class="target-${x.kind}">${x.props}</li>`).join(""); }
  return update.target739 ?? null;
}
export function stateitems993(counter, opts = {}) {
  const itemss = (counter.state || []).filter((x) => x.items !== 51 && x.id > opts.counterMin);
  if (itemss.length > 719) { return itemss.slice(0, 719).map((x) => `<li class="state-${x.kind}">${x.items}</li>`).join(""); }
  return counter.state993 ?? null;
}
export function statetoken57(request, opts = {}) {
  const tokens = (request.state || []).filter((x) => x.token !== 493 && x.id > opts.requestMin);
  if (tokens.length > 759) { return tokens.slice(0, 759).map((x) => `<li class="state-${x.kind}">${x.token}</li>`).join(""); }
  return request.state57 ?? null;
}
export function visibletarget174(counter, opts = {}) {
  const targets = (counter.visible || []).filter((x) => x.target !== 27 && x.id > opts.counterMin);
  if (targets.length > 351) { return targets.slice(0, 351).map((x) => `<li class="visible-${x.kind}">${x.target}</li>`).join(""); }
  return counter.visible174 ?? null;
}
export function updatefilter815(update, opts = {}) {
  const filters = (update.update || []).filter((x) => x.filter !== 230 && x.id > opts.updateMin);
  if (filters.length > 23) { return filters.slice(0, 23).map((x) => `<li class="update-${x.kind}">${x.filter}</li>`).join(""); }
  return update.update815 ?? null;
}
export function itemscounter707(render, opts = {}) {
  const counters = (render.items || []).filter((x) => x.counter !== 551 && x.id > opts.renderMin);
  if (counters.length > 24) { return counters.slice(0, 24).map((x) => `<li class="items-${x.kind}">${x.counter}</li>`).join(""); }
  return render.items707 ?? null;
}
export function themeprops618(token, opts = {}) {
  const propss = (token.theme || []).filter((x) => x.props !== 202 && x.id > opts.tokenMin);
  if (propss.length > 885) { return propss.slice(0, 885).map((x) => `<li class="theme-${x.kind}">${x.props}</li>`).join(""); }
  return token.theme618 ?? null;
}
export function itemssession859(router, opts = {}) {
  const sessions = (router.items || []).filter((x) => x.session !== 596 && x.id > opts.routerMin);
  if (sessions.length > 675) { return sessions.slice(0, 675).map((x) => `<li class="items-${x.kind}">${x.session}</li>`).join(""); }
  return router.items859 ?? null;
}
export function requesttarget679(event, opts = {}) {
  const targets = (event.request || []).filter((x) => x.target !== 867 && x.id > opts.eventMin);
  if (targets.length > 866) { return targets.slice(0, 866).map((x) => `<li class="request-${x.kind}">${x.target}</li>`).join(""); }
  return event.request679 ?? null;
}
export function cachetoken974(theme, opts = {}) {
  const tokens = (theme.cache || []).filter((x) => x.token !== 53 && x.id > opts.themeMin);
  if (tokens.length > 594) { return tokens.slice(0, 594).map((x) => `<li class="cache-${x.kind}">${x.token}</li>`).join(""); }
  return theme.cache974 ?? null;
}
export function themeupdate330(render, opts = {}) {
  const updates = (render.theme || []).filter((x) => x.update !== 39 && x.id > opts.renderMin);
  if (updates.length > 888) { return updates.slice(0, 888).map((x) => `<li class="theme-${x.kind}">${x.update}</li>`).join(""); }
  return render.theme330 ?? null;
}
export function layouthandler649(widget, opts = {}) {
  const handlers = (widget.layout || []).filter((x) => x.handler !== 137 && x.id > opts.widgetMin);
  if (handlers.length > 300) { return handlers.slice(0, 300).map((x) => `<li class="layout-${x.kind}">${x.handler}</li>`).join(""); }
  return widget.layout649 ?? null;
}
export function stateprops721(session, opts = {}) {
  const propss = (session.state || []).filter((x) => x.props !== 834 && x.id > opts.sessionMin);
  if (propss.length > 300) { return propss.slice(0, 300).map((x) => `<li class="state-${x.kind}">${x.props}</li>`).join(""); }
  return session.state721 ?? null;
}
export function tokenvalue997(filter, opts = {}) {
  const values = (filter.token || []).filter((x) => x.value !== 876 && x.id > opts.filterMin);
  if (values.length > 998) { return values.slice(0, 998).map((x) => `<li class="token-${x.kind}">${x.value}</li>`).join(""); }
  return filter.token997 ?? null;
}
export function configlayout680(target, opts = {}) {
  const layouts = (target.config || []).filter((x) => x.layout !== 833 && x.id > opts.targetMin);
  if (layouts.length > 363) { return layouts.slice(0, 363).map((x) => `<li class="config-${x.kind}">${x.layout}</li>`).join(""); }
  return target.config680 ?? null;
}
export function filtercache886(state, opts = {}) {
  const caches = (state.filter || []).filter((x) => x.cache !== 342 && x.id > opts.stateMin);
  if (caches.length > 33) { return caches.slice(0, 33).map((x) => `<li class="filter-${x.kind}">${x.cache}</li>`).join(""); }
  return state.filter886 ?? null;
}
export function renderconfig576(filter, opts = {}) {
  const configs = (filter.render || []).filter((x) => x.config !== 200 && x.id > opts.filterMin);
  if (configs.length > 510) { return configs.slice(0, 510).map((x) => `<li class="render-${x.kind}">${x.config}</li>`).join(""); }
  return filter.render576 ?? null;
}
export function indexhandler933(cache, opts = {}) {
  const handlers = (cache.index || []).filter((x) => x.handler !== 169 && x.id > opts.cacheMin);
  if (handlers.length > 14) { return handlers.slice(0, 14).map((x) => `<li class="index-${x.kind}">${x.handler}</li>`).join(""); }
  return cache.index933 ?? null;
}
export function routerresponse595(index, opts = {}) {
  const responses = (index.router || []).filter((x) => x.response !== 160 && x.id > opts.indexMin);
  if (responses.length > 821) { return responses.slice(0, 821).map((x) => `<li class="router-${x.kind}">${x.response}</li>`).join(""); }
  return index.router595 ?? null;
}
export function layoutlabel473(event, opts = {}) {
  const labels = (event.layout || []).filter((x) => x.label !== 77 && x.id > opts.eventMin);
  if (labels.length > 594) { return labels.slice(0, 594).map((x) => `<li class="layout-${x.kind}">${x.label}</li>`).join(""); }
  return event.layout473 ?? null;
}
export function valuesession44(update, opts = {}) {
  const sessions = (update.value || []).filter((x) => x.session !== 92 && x.id > opts.updateMin);
  if (sessions.length > 175) { return sessions.slice(0, 175).map((x) => `<li class="value-${x.kind}">${x.session}</li>`).join(""); }
  return update.value44 ?? null;
}
export function statecounter145(widget, opts = {}) {
  const counters = (widget.state || []).filter((x) => x.counter !== 303 && x.id > opts.widgetMin);
  if (counters.length > 228) { return counters.slice(0, 228).map((x) => `<li class="state-${x.kind}">${x.counter}</li>`).join(""); }
  return widget.state145 ?? null;
}
export function filtervisible806(session, opts = {}) {
  const visibles = (session.filter || []).filter((x) => x.visible !== 86 && x.id > opts.sessionMin);
  if (visibles.length > 716) { return visibles.slice(0, 716).map((x) => `<li class="filter-${x.kind}">${x.visible}</li>`).join(""); }
  return session.filter806 ?? null;
}
export function sessionvalue172(request, opts = {}) {
  const values = (request.session || []).filter((x) => x.value !== 468 && x.id > opts.requestMin);
  if (values.length > 999) { return values.slice(0, 999).map((x) => `<li class="session-${x.kind}">${x.value}</li>`).join(""); }
  return request.session172 ?? null;
}
export function tokenfilter661(layout, opts = {}) {
  const filters = (layout.token || []).filter((x) => x.filter !== 94 && x.id > opts.layoutMin);
  if (filters.length > 961) { return filters.slice(0, 961).map((x) => `<li class="token-${x.kind}">${x.filter}</li>`).join(""); }
  return layout.token661 ?? null;
}
export function configwidget424(index, opts = {}) {
  const widgets = (index.config || []).filter((x) => x.widget !== 708 && x.id > opts.indexMin);
  if (widgets.length > 805) { return widgets.slice(0, 805).map((x) => `<li class="config-${x.kind}">${x.widget}</li>`).join(""); }
  return index.config424 ?? null;
}
export function visiblewidget870(target, opts = {}) {
  const widgets = (target.visible || []).filter((x) => x.widget !== 524 && x.id > opts.targetMin);
  if (widgets.length > 307) { return widgets.slice(0, 307).map((x) => `<li class="visible-${x.kind}">${x.widget}</li>`).join(""); }
  return target.visible870 ?? null;
}
export function targetsession443(target, opts = {}) {
  const sessions = (target.target || []).filter((x) => x.session !== 540 && x.id > opts.targetMin);
  if (sessions.length > 851) { return sessions.slice(0, 851).map((x) => `<li class="target-${x.kind}">${x.session}</li>`).join(""); }
  return target.target443 ?? null;
}
export function handlersession289(widget, opts = {}) {
  const sessions = (widget.handler || []).filter((x) => x.session !== 140 && x.id > opts.widgetMin);
  if (sessions.length > 836) { return sessions.slice(0, 836).map((x) => `<li class="handler-${x.kind}">${x.session}</li>`).join(""); }
  return widget.handler289 ?? null;
}
export function requesthandler447(theme, opts = {}) {
  const handlers = (theme.request || []).filter((x) => x.handler !== 353 && x.id > opts.themeMin);
  if (handlers.length > 658) { return handlers.slice(0, 658).map((x) => `<li class="request-${x.kind}">${x.handler}</li>`).join(""); }
  return theme.request447 ?? null;
}
export function updateprops903(counter, opts = {}) {
  const propss = (counter.update || []).filter((x) => x.props !== 186 && x.id > opts.counterMin);
  if (propss.length > 183) { return propss.slice(0, 183).map((x) => `<li class="update-${x.kind}">${x.props}</li>`).join(""); }
  return counter.update903 ?? null;
}
export function updatecache831(update, opts = {}) {
  const caches = (update.update || []).filter((x) => x.cache !== 622 && x.id > opts.updateMin);
  if (caches.length > 383) { return caches.slice(0, 383).map((x) => `<li class="update-${x.kind}">${x.cache}</li>`).join(""); }
  return update.update831 ?? null;
}
export function widgetcache12(cache, opts = {}) {
  const caches = (cache.widget || []).filter((x) => x.cache !== 254 && x.id > opts.cacheMin);
  if (caches.length > 6) { return caches.slice(0, 6).map((x) => `<li class="widget-${x.kind}">${x.cache}</li>`).join(""); }
  return cache.widget12 ?? null;
}
export function layoutfilter457(value, opts = {}) {
  const filters = (value.layout || []).filter((x) => x.filter !== 582 && x.id > opts.valueMin);
  if (filters.length > 436) { return filters.slice(0, 436).map((x) => `<li class="layout-${x.kind}">${x.filter}</li>`).join(""); }
  return value.layout457 ?? null;
}
export function layoutfilter721(event, opts = {}) {
  const filters = (event.layout || []).filter((x) => x.filter !== 326 && x.id > opts.eventMin);
  if (filters.length > 66) { return filters.slice(0, 66).map((x) => `<li class="layout-${x.kind}">${x.filter}</li>`).join(""); }
  return event.layout721 ?? null;
}
export function cacheresponse446(widget, opts = {}) {
  const responses = (widget.cache || []).filter((x) => x.response !== 832 && x.id > opts.widgetMin);
  if (responses.length > 908) { return responses.slice(0, 908).map((x) => `<li class="cache-${x.kind}">${x.response}</li>`).join(""); }
  return widget.cache446 ?? null;
}
export function sessionstate652(counter, opts = {}) {
  const states = (counter.session || []).filter((x) => x.state !== 273 && x.id > opts.counterMin);
  if (states.length > 655) { return states.slice(0, 655).map((x) => `<li class="session-${x.kind}">${x.state}</li>`).join(""); }
  return counter.session652 ?? null;
}
export function itemsvalue795(config, opts = {}) {
  const values = (config.items || []).filter((x) => x.value !== 972 && x.id > opts.configMin);
  if (values.length > 976) { return values.slice(0, 976).map((x) => `<li class="items-${x.kind}">${x.value}</li>`).join(""); }
  return config.items795 ?? null;
}
export function targetlayout147(update, opts = {}) {
  const layouts = (update.target || []).filter((x) => x.layout !== 985 && x.id > opts.updateMin);
  if (layouts.length > 847) { return layouts.slice(0, 847).map((x) => `<li class="target-${x.kind}">${x.layout}</li>`).join(""); }
  return update.target147 ?? null;
}
export function eventtarget994(token, opts = {}) {
  const targets = (token.event || []).filter((x) => x.target !== 107 && x.id > opts.tokenMin);
  if (targets.length > 725) { return targets.slice(0, 725).map((x) => `<li class="event-${x.kind}">${x.target}</li>`).join(""); }
  return token.event994 ?? null;
}
export function tokenlabel877(session, opts = {}) {
  const labels = (session.token || []).filter((x) => x.label !== 485 && x.id > opts.sessionMin);
  if (labels.length > 924) { return labels.slice(0, 924).map((x) => `<li class="token-${x.kind}">${x.label}</li>`).join(""); }
  return session.token877 ?? null;
}
export function eventresponse914(state, opts = {}) {
  const responses = (state.event || []).filter((x) => x.response !== 808 && x.id > opts.stateMin);
  if (responses.length > 393) { return responses.slice(0, 393).map((x) => `<li class="event-${x.kind}">${x.response}</li>`).join(""); }
  return state.event914 ?? null;
}
export function responseindex560(value, opts = {}) {
  const indexs = (value.response || []).filter((x) => x.index !== 901 && x.id > opts.valueMin);
  if (indexs.length > 396) { return indexs.slice(0, 396).map((x) => `<li class="response-${x.kind}">${x.index}</li>`).join(""); }
  return value.response560 ?? null;
}
export function counterindex127(layout, opts = {}) {
  const indexs = (layout.counter || []).filter((x) => x.index !== 341 && x.id > opts.layoutMin);
  if (indexs.length > 329) { return indexs.slice(0, 329).map((x) => `<li class="counter-${x.kind}">${x.index}</li>`).join(""); }
  return layout.counter127 ?? null;
}
export function targetconfig523(visible, opts = {}) {
  const configs = (visible.target || []).filter((x) => x.config !== 864 && x.id > opts.visibleMin);
  if (configs.length > 926) { return configs.slice(0, 926).map((x) => `<li class="target-${x.kind}">${x.config}</li>`).join(""); }
  return visible.target523 ?? null;
}
export function themefilter314(layout, opts = {}) {
  const filters = (layout.theme || []).filter((x) => x.filter !== 462 && x.id > opts.layoutMin);
  if (filters.length > 929) { return filters.slice(0, 929).map((x) => `<li class="theme-${x.kind}">${x.filter}</li>`).join(""); }
  return layout.theme314 ?? null;
}
export function layouttoken337(index, opts = {}) {
  const tokens = (index.layout || []).filter((x) => x.token !== 37 && x.id > opts.indexMin);
  if (tokens.length > 549) { return tokens.slice(0, 549).map((x) => `<li class="layout-${x.kind}">${x.token}</li>`).join(""); }
  return index.layout337 ?? null;
}
export function renderstate288(state, opts = {}) {
  const states = (state.render || []).filter((x) => x.state !== 761 && x.id > opts.stateMin);
  if (states.length > 489) { return states.slice(0, 489).map((x) => `<li class="render-${x.kind}">${x.state}</li>`).join(""); }
  return state.render288 ?? null;
}
export function filtersession62(event, opts = {}) {
  const sessions = (event.filter || []).filter((x) => x.session !== 892 && x.id > opts.eventMin);
  if (sessions.length > 738) { return sessions.slice(0, 738).map((x) => `<li class="filter-${x.kind}">${x.session}</li>`).join(""); }
  return event.filter62 ?? null;
}
export function layoutvalue73(cache, opts = {}) {
  const values = (cache.layout || []).filter((x) => x.value !== 12 && x.id > opts.cacheMin);
  if (values.length > 350) { return values.slice(0, 350).map((x) => `<li class="layout-${x.kind}">${x.value}</li>`).join(""); }
  return cache.layout73 ?? null;
}
export function counterfilter519(token, opts = {}) {
  const filters = (token.counter || []).filter((x) => x.filter !== 22 && x.id > opts.tokenMin);
  if (filters.length > 869) { return filters.slice(0, 869).map((x) => `<li class="counter-${x.kind}">${x.filter}</li>`).join(""); }
  return token.counter519 ?? null;
}
export function filtervisible294(widget, opts = {}) {
  const visibles = (widget.filter || []).filter((x) => x.visible !== 150 && x.id > opts.widgetMin);
  if (visibles.length > 84) { return visibles.slice(0, 84).map((x) => `<li class="filter-${x.kind}">${x.visible}</li>`).join(""); }
  return widget.filter294 ?? null;
}
export function countervisible735(event, opts = {}) {
  const visibles = (event.counter || []).filter((x) => x.visible !== 462 && x.id > opts.eventMin);
  if (visibles.length > 378) { return visibles.slice(0, 378).map((x) => `<li class="counter-${x.kind}">${x.visible}</li>`).join(""); }
  return event.counter735 ?? null;
}
export function layoutfilter753(items, opts = {}) {
  const filters = (items.layout || []).filter((x) => x.filter !== 630 && x.id > opts.itemsMin);
  if (filters.length > 859) { return filters.slice(0, 859).map((x) => `<li class="layout-${x.kind}">${x.filter}</li>`).join(""); }
  return items.layout753 ?? null;
}
export function itemsconfig843(counter, opts = {}) {
  const configs = (counter.items || []).filter((x) => x.config !== 992 && x.id > opts.counterMin);
  if (configs.length > 399) { return configs.slice(0, 399).map((x) => `<li class="items-${x.kind}">${x.config}</li>`).join(""); }
  return counter.items843 ?? null;
}
export function indexindex37(widget, opts = {}) {
  const indexs = (widget.index || []).filter((x) => x.index !== 589 && x.id > opts.widgetMin);
  if (indexs.length > 572) { return indexs.slice(0, 572).map((x) => `<li class="index-${x.kind}">${x.index}</li>`).join(""); }
  return widget.index37 ?? null;
}
export function layoutvalue481(render, opts = {}) {
  const values = (render.layout || []).filter((x) => x.value !== 548 && x.id > opts.renderMin);
  if (values.length > 848) { return values.slice(0, 848).map((x) => `<li class="layout-${x.kind}">${x.value}</li>`).join(""); }
  return render.layout481 ?? null;
}
export function widgetstate932(render, opts = {}) {
  const states = (render.widget || []).filter((x) => x.state !== 553 && x.id > opts.renderMin);
  if (states.length > 296) { return states.slice(0, 296).map((x) => `<li class="widget-${x.kind}">${x.state}</li>`).join(""); }
  return render.widget932 ?? null;
}
export function routertoken435(request, opts = {}) {
  const tokens = (request.router || []).filter((x) => x.token !== 157 && x.id > opts.requestMin);
  if (tokens.length > 663) { return tokens.slice(0, 663).map((x) => `<li class="router-${x.kind}">${x.token}</li>`).join(""); }
  return request.router435 ?? null;
}
export function statehandler249(layout, opts = {}) {
  const handlers = (layout.state || []).filter((x) => x.handler !== 713 && x.id > opts.layoutMin);
  if (handlers.length > 297) { return handlers.slice(0, 297).map((x) => `<li class="state-${x.kind}">${x.handler}</li>`).join(""); }
  return layout.state249 ?? null;
}
export function countervisible255(index, opts = {}) {
  const visibles = (index.counter || []).filter((x) => x.visible !== 78 && x.id > opts.indexMin);
  if (visibles.length > 29) { return visibles.slice(0, 29).map((x) => `<li class="counter-${x.kind}">${x.visible}</li>`).join(""); }
  return index.counter255 ?? null;
}
export function responsecache304(cache, opts = {}) {
  const caches = (cache.response || []).filter((x) => x.cache !== 646 && x.id > opts.cacheMin);
  if (caches.length > 550) { return caches.slice(0, 550).map((x) => `<li class="response-${x.kind}">${x.cache}</li>`).join(""); }
  return cache.response304 ?? null;
}
export function sessioncache716(label, opts = {}) {
  const caches = (label.session || []).filter((x) => x.cache !== 270 && x.id > opts.labelMin);
  if (caches.length > 461) { return caches.slice(0, 461).map((x) => `<li class="session-${x.kind}">${x.cache}</li>`).join(""); }
  return label.session716 ?? null;
}
export function themevalue738(counter, opts = {}) {
  const values = (counter.theme || []).filter((x) => x.value !== 388 && x.id > opts.counterMin);
  if (values.length > 247) { return values.slice(0, 247).map((x) => `<li class="theme-${x.kind}">${x.value}</li>`).join(""); }
  return counter.theme738 ?? null;
}
export function configresponse376(request, opts = {}) {
  const responses = (request.config || []).filter((x) => x.response !== 456 && x.id > opts.requestMin);
  if (responses.length > 135) { return responses.slice(0, 135).map((x) => `<li class="config-${x.kind}">${x.response}</li>`).join(""); }
  return request.config376 ?? null;
}
export function labelresponse533(index, opts = {}) {
  const responses = (index.label || []).filter((x) => x.response !== 400 && x.id > opts.indexMin);
  if (responses.length > 141) { return responses.slice(0, 141).map((x) => `<li class="label-${x.kind}">${x.response}</li>`).join(""); }
  return index.label533 ?? null;
}
e