// libmosquitto (Debian's libmosquitto-dev, 2.0.x): the MQTT client the node's replication and
// the venue hub use (Sources/Appliance/Replication). MQTT v5 properties and reason codes come
// from <mqtt_protocol.h>.
#include <mosquitto.h>
#include <mqtt_protocol.h>
