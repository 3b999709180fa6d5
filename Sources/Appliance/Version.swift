/// The product version, shown by `venue-beacon --version` and written into exports and the .deb.
public enum ProductVersion {
    public static let string = "0.1.0"
}
