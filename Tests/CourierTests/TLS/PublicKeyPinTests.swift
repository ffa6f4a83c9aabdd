import Foundation
import Testing

@testable import Courier

/// The SPKI that Apple platforms' pinning rebuilds around Security's bare keys, checked against
/// openssl for every key type a TLS server may have.
@Suite struct PublicKeyPinTests {
    struct Key: Sendable, CustomTestStringConvertible {
        let name: String
        let algorithm: PublicKeyPin.Algorithm
        /// Base64 of the key as `SecKeyCopyExternalRepresentation` gives it: for RSA the PKCS #1
        /// `RSAPublicKey` (`openssl rsa -RSAPublicKey_out -outform DER`), for elliptic curves
        /// the uncompressed point (`openssl ec -pubin -text`, the `pub:` bytes).
        let bare: String
        /// `openssl pkey -pubout -outform DER | openssl dgst -sha256 -binary | base64`.
        let pin: String
        var testDescription: String { name }
    }

    /// Keys made with `openssl genpkey` for this test.
    static let keys: [Key] = [
        Key(
            name: "RSA 2048", algorithm: .rsa,
            bare: "MIIBCgKCAQEA7vClS1tKXidnA2TEgijR1Wfwu+CfmYmYX6ZvND/EdssxBqa2ICQ4lTi+ZXmvjQEFx6qf5UplZG85ACHd3fcx"
                + "lC4zPTvToiaoA+jhqfJkdnURlR4Nt7Rk1jHBuQOfPpx+v0aJ3m8UljuDXZhLC3D7Fe4dsucICWxrFr4ZEkW5Lt82NKbzpF87"
                + "glRBGhzZ6UJFfhyV+pmWftJfKfvIDSlAg4C/2Gx3P1LoqVKuUZ66z2xkYa8cWW1355JHjlGVt9eqKbVbh7PBndyG+UHNQFrP"
                + "tUVP8SM0ryIYzn70/LPSzziPGxLmZ3/d482oTWHeEYZUZULMf1+K8hTSnTfbHVu5swIDAQAB",
            pin: "bht5tXtYe1FA4cPEHpctDSW29n2E6//wiT9cYIbRflc="),
        Key(
            name: "RSA 2048, exponent 3", algorithm: .rsa,
            bare: "MIIBCAKCAQEAyl04tgT5GILJsmhrWLma+7obwyw2zqR75wBkpSbJNfznu8JZxC0d29fNM1AbsxRN7RTVXFGvWeZ+qd2mx4BE"
                + "1uwOzpmQV/gZPrFdGmy/a8MrxfrFNC9EpH1Pl5vW7FetpsEWbvTaKsGLqCR7H81rwWYr2V9oWBQ8fE2DVCSMlsMyNzb5t0rh"
                + "WroXTYlk5OXsE3uQntfpgFYK7/1S2Lx/hN4L+AKH041PKuPCXbF+tKDVyXBGb9/MSzJRPKeg1Bde9fTpmePpLtzr+1n1VwM+"
                + "sTsXU9bUOP1GFzUsEpJ9++wCYlsjsGIzcpXxuqubCYHYRwaTzDbuar6reeZrdQUZ+wIBAw==",
            pin: "UhHiUwVC/6CcjnvA4ttn1YmsXBGb7c/lolelmcz3r/4="),
        Key(
            name: "RSA 3072", algorithm: .rsa,
            bare: "MIIBigKCAYEAy96vpbpAw0eADFtV9ldKYJbZszrne3EgnBVIXVyKGs4AhKhf6+40+12oAOw0uV5znXB50fntlTjin/gFRUth"
                + "dLkrUrKXHqDF7T1em48PLv0nRS3z1uxrQ1X/Z03dl4KZ7LYp/OKn5qJl+4rVgpukYe0gCeLbJj5GHcBQSFRcFQbeW5Kpi+Y7"
                + "SumtIyIjnp8/5a5mC/fk5b3I3jKwF21s5PaAQ9YZeA6BgmpovSpGjc/d88FOqHwAPHQ3U6LEIH0EZ9IBfRxPDmLFrZhspEld"
                + "VfZ2fLE1soQ0r+55jSMvmCRtIxmyuFqTVRjASXbE5tpWmERW2nXKaNaxB0rEl+XVOLdQ66jRwKJs0VhIMzZgZy5AFBrXhEk+"
                + "Jy4VFwUWdd4p/QVRzwLItOJIH8sOKTpcGDYIGRmxvR+7GDtiqWG3tZtcrpXZCK+7uSE/JI9Fd9Db2AFmNfiTGLMGbPaMUKys"
                + "H6e0EQIx4CgqocvxlhKJ8kOmg7zPTIuEDBhad766BzhVAgMBAAE=",
            pin: "VrGrrNWSL8FNSAyeLoLrG8aZBHBQn+mL6cUXv56uCCw="),
        Key(
            name: "RSA 4096", algorithm: .rsa,
            bare: "MIICCgKCAgEAzHhzBM0TWWOqEhF1HPAusvWZq0L1pCL2N7HxTC8n9HYMHADR+5O10u730At787F22pOklkoKwOyXFx7ZJGiP"
                + "IL2WVFlrDYtf+pie3OcE4hDkCiuSpMCVtjkOTqxhPXDlWDMZq6nlnUZk2qrDSsID/i4AgIqAbUKW+MJBF7o/A73rwnWNk2AA"
                + "RjC8S+5AU0IivfrQtSZjFjsk4b7qvIbMt5+5dWq2wL0PJYYzGRYieEkWikWNMwVT4muADVxapMi0PdqX/D010YIbokTdDQHl"
                + "6qt2w55g4SB5Ji3eNpVYsE7eRX6RggOd4gUl+hf/pGun/tfvOS3nTd+VvSuj4v20Ocw6I8JgJFu0o3wFJH3n10A7aUZ2/bcH"
                + "tQHWQn0Rj0mv9Jf4CNYOHrMl+1HHQTXFcb3Sg6Sk8+hVc+9PgfUwbfGBj5yiK03n4icvDxa0V3LxUHhR2Hq48SKpiyVvCsbq"
                + "q3js8h2DxaVbCr7ON/LRXjCZtSVkC0xV+JeTwAMQJL96zH9hIzAfUyhDFQy3M/ZY54C41S5i14Am/QDgmzP+V/6tmNj8lE88"
                + "7Xf/jW7gBbqS1glhYZUM2sOGUdOooMKpssDeWaXUPaLcK0rLDM/4IUQvVDh+5shM5rhVR2IIJq5RsQWkoFMQJPjpVDlGYpwq"
                + "pjBE3Yy+TADYFeyH9N0LV2sCAwEAAQ==",
            pin: "DXfZJVnaA+bi6wZn1Q3L4RfPYICyHoUrck/x5x71hJw="),
        Key(
            name: "P-256", algorithm: .ecP256,
            bare: "BGeiaoIACUGHoPZP/z/61+73bDob91jvL34lss96vFDcML2anhNPidWfuHvmm9HrfVI/q61u8VQnm1+DqgDHwB8=",
            pin: "beTWg1DoGzn1mhVYRuKC928o+UZOB5RR+Qabbqac45E="),
        Key(
            name: "P-384", algorithm: .ecP384,
            bare: "BG5YE4t6h6zM5l63l69NX7CTtrUa4eReHUJ1BIH3/saYKujSanklGYP4Hkk27VvMQaIqS/QqyNmP9vH+nVNSXd21FqDDuL+F"
                + "hH1p2TamiYOyetQAACYvdxQk4zDAnVgSmQ==",
            pin: "C+TCSq2kHXFgJT4vTvtFasC0Ve1KDsZcgAy6C5Nz1Vo="),
        Key(
            name: "P-521", algorithm: .ecP521,
            bare: "BACjE6wa1SgawAZC7eGwGsC7wN25n0mMqkPk8w3kOcmrA+Oqsfn/BI2d7Tulfav1TWXX8ir2ce8TjLt0xeM6PbyNbgBOhj9M"
                + "gV4dRbnAxS4x6/wcm6YDWOCuO8Y2XCC0SZLGs5u4EBWNqnDH0yYY+eeZDrx5e1TwYGrnm8U6ILQS/2Y1jw==",
            pin: "v1VXukQnEtQEdw215wAVUkU484/FTdQWn8RpuF0FuLY="),
    ]

    @Test("the pin of a bare key is openssl's pin of its SubjectPublicKeyInfo", arguments: keys)
    func pinMatchesOpenSSL(key: Key) throws {
        let bare = try #require(Data(base64Encoded: key.bare))
        #expect(PublicKeyPin.pin(of: bare, algorithm: key.algorithm) == key.pin)
    }

    @Test("Security's key type and size name the algorithm; other keys cannot be pinned")
    func algorithms() {
        #expect(PublicKeyPin.Algorithm(isRSA: true, isEllipticCurve: false, bits: 3072) == .rsa)
        #expect(PublicKeyPin.Algorithm(isRSA: false, isEllipticCurve: true, bits: 256) == .ecP256)
        #expect(PublicKeyPin.Algorithm(isRSA: false, isEllipticCurve: true, bits: 384) == .ecP384)
        #expect(PublicKeyPin.Algorithm(isRSA: false, isEllipticCurve: true, bits: 521) == .ecP521)
        #expect(PublicKeyPin.Algorithm(isRSA: false, isEllipticCurve: true, bits: 224) == nil)
        #expect(PublicKeyPin.Algorithm(isRSA: false, isEllipticCurve: false, bits: 256) == nil)
    }

    @Test("DER lengths: short form below 128 bytes, long form from 128")
    func derLengths() {
        #expect(PublicKeyPin.der(tag: 0x04, [UInt8](repeating: 1, count: 127)).prefix(2) == [0x04, 0x7F])
        #expect(PublicKeyPin.der(tag: 0x04, [UInt8](repeating: 1, count: 128)).prefix(3) == [0x04, 0x81, 0x80])
        #expect(PublicKeyPin.der(tag: 0x04, [UInt8](repeating: 1, count: 256)).prefix(4) == [0x04, 0x82, 0x01, 0x00])
        #expect(
            PublicKeyPin.der(tag: 0x04, [UInt8](repeating: 1, count: 70_000)).prefix(5) == [
                0x04, 0x83, 0x01, 0x11, 0x70,
            ])
    }
}
