// A venue of its own: virtual phones and things with known arrivals and departures, so the node's
// diary can be judged against the truth (design ladder item 3).
//
// Public surface, bottom up:
//
//   SimulationRandom       seeded xoshiro256** with its own distributions; one stream per device
//   VirtualClock, Pacer    virtual seconds since opening; pacing at max speed or a speed-up
//   TimedEventHeap         min-heap scheduler, ties in scheduling order
//   VenueConfiguration     visitors, hours, seed, phone mix, behaviour, the diary's limits
//   VenueModel.generate    → GroundTruth: people, SimulatedDevices (presence, distance paths,
//                          adverts, address rotation), TrueVisits
//   RadioModel             log-distance path loss, shadowing, advert loss, sensitivity
//   AdvertStream           every present device's adverts in time order through the radio model
//   EfficacyReport         the diary's visits judged against the truth; JSON and text
//
// Nothing here reads a real clock or the system's randomness: a seed repeats a run exactly.
