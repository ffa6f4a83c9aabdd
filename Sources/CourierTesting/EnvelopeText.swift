import Courier
import Foundation

/// The JSON text of an envelope, under the keys an ``EnvelopeFormat`` names.
enum EnvelopeText {
    /// Encodes `{codeKey: code, messageKey: message, dataKey: data}`.
    /// - Returns: The JSON bytes.
    /// - Throws: `EncodingError` when `data` cannot be encoded.
    static func encode(code: Int, message: String, data: some Encodable, format: EnvelopeFormat) throws -> Data {
        try JSONEncoder().encode(Body(code: code, message: message, data: data, format: format))
    }

    private struct Body<Payload: Encodable>: Encodable {
        let code: Int
        let message: String
        let data: Payload
        let format: EnvelopeFormat

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: Key.self)
            try container.encode(code, forKey: Key(format.codeKey))
            try container.encode(message, forKey: Key(format.messageKey))
            try container.encode(data, forKey: Key(format.dataKey))
        }
    }

    private struct Key: CodingKey {
        let stringValue: String
        var intValue: Int? { nil }
        init(_ name: String) { stringValue = name }
        init?(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }
}
