// The traffic module's public surface: pure translators from a route as read and the weights to the route to write.
export { stableShare } from './route-edit.ts';
export type {
  RouteDestination,
  RouteEdit,
  RouteObject,
  RouteResource,
  RouteSource,
  RouteServices,
  RouteWeights,
  RouteWeightsRead,
} from './route-edit.ts';
export { RouteTranslationError, objectName, type RouteTranslationCode } from './route-translation-error.ts';
export { GATEWAY_API_RESOURCES, gatewayRouteEdit } from './gateway-api-routes.ts';
export { ISTIO_RESOURCES, destinationRuleEdit, virtualServiceEdit } from './istio-routes.ts';
export {
  INGRESS_RESOURCE,
  canaryIngressEdit,
  canaryIngressName,
  type IngressOwner,
} from './nginx-ingress.ts';
export { TRAFFIC_SPLIT_RESOURCE, trafficSplitEdit, type SplitOwner } from './smi-traffic-split.ts';
export { TRAEFIK_SERVICE_RESOURCE, traefikServiceEdit } from './traefik-service.ts';
export {
  MAPPING_RESOURCE,
  canaryMappingEdit,
  canaryMappingName,
  type MappingOwner,
} from './ambassador-mappings.ts';
export { CONTOUR_HEADER_ROUTES_ANNOTATION, HTTP_PROXY_RESOURCE, httpProxyEdit } from './contour-httpproxy.ts';
export { OPENSHIFT_ROUTE_RESOURCE, openShiftRouteEdit } from './openshift-route.ts';
export { APISIX_ROUTE_RESOURCE, apisixRouteEdit } from './apisix-route.ts';
export { APP_MESH_RESOURCES, NO_CANARY_HASH, appMeshEdits } from './app-mesh-routes.ts';
export { albIngressEdit, albActionKey, albConditionKey, albActionService } from './alb-ingress.ts';
export {
  TRAFFIC_PROVIDERS,
  routesOfRollout,
  type RolloutRoutes,
  type TrafficProvider,
} from './traffic-providers.ts';
